"""The torch build is a choice of `make env` (TORCH=cpu, cu126 or cu130), and each CUDA build's lock pins what
that build of torch declares, read from the lock file alone (no network)."""

import os
import re
import subprocess
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
CUDA_LOCKS = sorted(ROOT.glob("requirements-cu*.lock"))
REQUIRES = re.compile(r"# requires (?P<package>[^=\s]+)==(?P<version>\S+): (?P<requirement>.+)")


def normalise(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(path):
    found = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, sep, version = line.partition("==")
            assert sep and re.fullmatch(r"[\w.+!-]+", version.strip()), f"{path.name}: {line!r} is not an exact pin"
            assert normalise(name) not in found, f"{path.name}: {name} pinned twice"
            found[normalise(name)] = version.strip()
    return found


def make(*args):
    """`make -n`: the commands, none run. Without the flags and variables of a make this runs under (`make test
    TORCH=cu130` passes TORCH=cu130 down in MAKEFLAGS)."""
    env = {key: value for key, value in os.environ.items() if key not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "TORCH")}
    return subprocess.run(["make", "--no-print-directory", "-n", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True)


def test_the_cuda_13_lock_is_there():
    assert ROOT / "requirements-cu130.lock" in CUDA_LOCKS


@pytest.mark.parametrize("lock", CUDA_LOCKS, ids=lambda path: path.name)
def test_a_cuda_lock_pins_every_requirement_its_packages_declare(lock):
    main = pins(ROOT / "requirements.lock")
    cuda = pins(lock)
    assert not set(cuda) & set(main), "a package pinned in both locks"
    both = {**main, **cuda}
    declared = [match.groupdict() for match in map(REQUIRES.fullmatch, lock.read_text().splitlines()) if match]
    requirers = {normalise(d["package"]) for d in declared}
    assert "torch" in requirers, "the lock records no requirement of torch"
    for entry in declared:
        package = normalise(entry["package"])
        assert both.get(package) == entry["version"], f"{package} {entry['version']} is not the pinned version"
        requirement = Requirement(entry["requirement"])
        name = normalise(requirement.name)
        assert name in both, f"{package} requires {requirement}, which neither lock pins"
        assert requirement.specifier.contains(Version(both[name]), prereleases=True), \
            f"{package} requires {requirement}; the locks pin {name}=={both[name]}"
    # every package of the CUDA lock is there because torch or one of its CUDA packages asks for it
    required = {normalise(Requirement(d["requirement"]).name) for d in declared}
    assert set(cuda) <= required, f"pinned but required by nothing: {sorted(set(cuda) - required)}"
    assert {"triton"} <= set(cuda) and any(name.startswith("nvidia-") for name in cuda)


def test_a_bad_torch_build_is_one_line_naming_the_variable_and_exit_status_2():
    for value in ("cu999", "", "cpu cu130"):
        done = make("env", f"TORCH={value}")
        assert done.returncode == 2
        assert done.stderr.count("\n") == 1 and "TORCH=" in done.stderr and "cpu cu126 cu130" in done.stderr
    done = make("torch-lock", "TORCH=cpu")
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "TORCH=cpu" in done.stderr


def test_the_cpu_set_up_is_unchanged_and_a_cuda_one_installs_its_lock_without_dependencies(tmp_path):
    venv = tmp_path / "venv"  # one that does not exist yet: the default build is cpu
    cpu = make("-W", "requirements.lock", "env", f"VENV={venv}")  # as if the lock had changed; nothing runs
    assert cpu.returncode == 0, cpu.stderr
    assert "--find-links" in cpu.stdout
    assert "requirements-cu" not in cpu.stdout and "download.pytorch.org" not in cpu.stdout
    assert f"touch {venv}/.posbias-installed\n" in cpu.stdout  # the stamp a CPU .venv already has
    cuda = make("-W", "requirements.lock", "env", "TORCH=cu130")
    assert cuda.returncode == 0, cuda.stderr
    lines = cuda.stdout.replace("\\\n", " ").splitlines()
    torch = next(line for line in lines if "torch==2.13.0" in line)
    assert "--no-deps" in torch and "--index-url https://pypi.org/simple" in torch and "--find-links" not in torch
    assert any("--no-deps" in line and "-r requirements-cu130.lock" in line for line in lines)
    assert any("pip check" in line for line in lines)
    assert "touch .venv/.posbias-installed-cu130" in cuda.stdout


def test_without_torch_the_commands_take_the_build_the_venv_holds(tmp_path):
    venv = tmp_path / "venv"
    venv.mkdir()
    (venv / ".torch-build").write_text("cu130\n")
    done = make("-W", "requirements.lock", "env", f"VENV={venv}")
    assert done.returncode == 0, done.stderr
    assert "-r requirements-cu130.lock" in done.stdout and f"touch {venv}/.posbias-installed-cu130" in done.stdout
