"""Write requirements-<build>.lock: the packages a CUDA build of torch needs beyond requirements.lock.

    .venv/bin/python envs/torch_lock.py cu130      (`make torch-lock TORCH=cu130` runs this)

uv resolves `torch==<version>` from the build's index for CPython 3.11 on x86_64-manylinux_2_28, constrained by
requirements.lock (so the packages both need keep the main lock's versions). The lock lists, pinned at exact
versions, every resolved package that requirements.lock lacks; `make env TORCH=<build>` installs them with
--no-deps, like the main lock. Its header records what each package of the build declares (the Requires-Dist
of torch's wheel and of every package in the lock, read from the wheels' PEP 658 metadata files, markers
evaluated for that platform and the extras asked for): tests/test_torch_locks.py checks offline that every one
is pinned at a version it accepts. Only the metadata files are fetched, never a wheel.
"""

from __future__ import annotations

import argparse
import email.parser
import re
import struct
import subprocess
import sys
import tomllib
import urllib.request
import zlib
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
TORCH_VERSION = "2.13.0"
PYPI = "https://pypi.org/simple"
# Where each build's torch wheel comes from: PyPI's Linux wheel is the CUDA 13.0 build (its metadata requires
# cuda-toolkit==13.0.*); the CUDA 12.6 build is on the PyTorch index only.
INDEXES = {"cu126": "https://download.pytorch.org/whl/cu126", "cu130": PYPI}
WHEEL_HOSTS = {"cu126": "download.pytorch.org", "cu130": "files.pythonhosted.org"}
PYTHON, PLATFORM = "3.11", "x86_64-manylinux_2_28"
# The marker environment of that platform (what `uv pip compile --python-platform` resolves for).
ENVIRONMENT = {**default_environment(), "python_version": PYTHON, "python_full_version": PYTHON + ".0",
               "implementation_name": "cpython", "platform_python_implementation": "CPython",
               "sys_platform": "linux", "platform_system": "Linux", "platform_machine": "x86_64", "os_name": "posix"}


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(path: Path) -> dict[str, str]:
    found = {}
    for line in path.read_text().splitlines():
        name, sep, version = line.split("#")[0].strip().partition("==")
        if sep:
            found[normalise(name)] = version.strip()
    return found


def resolve(build: str, uv: str) -> list[dict]:
    """uv's resolution of torch for the build, as pylock.toml packages (name, version, wheel urls)."""
    extra = [] if INDEXES[build] == PYPI else ["--extra-index-url", PYPI]
    command = [uv, "pip", "compile", "-", "--quiet", "--no-header", "--format", "pylock.toml",
               "--python-version", PYTHON, "--python-platform", PLATFORM, "--index-url", INDEXES[build], *extra,
               "-c", str(ROOT / "requirements.lock")]
    done = subprocess.run(command, input=f"torch=={TORCH_VERSION}\n", capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"torch_lock: uv could not resolve torch=={TORCH_VERSION} from {INDEXES[build]}: "
                 f"{done.stderr.strip().splitlines()[-1] if done.stderr.strip() else done.returncode}")
    return tomllib.loads(done.stdout)["packages"]


def fetch(url: str, byte_range: str | None = None) -> bytes:
    request = urllib.request.Request(url, headers={"Range": f"bytes={byte_range}"} if byte_range else {})
    with urllib.request.urlopen(request, timeout=60) as response:
        return response.read()


def wheel_metadata(url: str) -> str:
    """A wheel's METADATA: its PEP 658 file (`<wheel url>.metadata`) where the index has one, else read from the
    wheel's zip by HTTP range requests (the central directory at its end, then the one member), as uv does."""
    try:
        return fetch(url + ".metadata").decode()
    except OSError:
        pass
    tail = fetch(url, "-262144")
    end = tail.rfind(b"PK\x05\x06")
    if end < 0:
        raise OSError("no zip directory in the last 256 KiB")
    size, offset = struct.unpack("<II", tail[end + 12:end + 20])
    directory = tail[end - size:end] if size <= end else fetch(url, f"{offset}-{offset + size - 1}")
    position = 0
    while position < len(directory):
        (method, compressed, name_length, extra_length, comment_length,
         local) = struct.unpack("<6xH8xI4xHHH8xI", directory[position + 4:position + 46])
        name = directory[position + 46:position + 46 + name_length].decode()
        position += 46 + name_length + extra_length + comment_length
        if re.fullmatch(r"[^/]+\.dist-info/METADATA", name):
            header = fetch(url, f"{local}-{local + 29}")
            start = local + 30 + sum(struct.unpack("<HH", header[26:30]))
            data = fetch(url, f"{start}-{start + compressed - 1}")
            return (zlib.decompress(data, -15) if method == 8 else data).decode()
    raise OSError("no .dist-info/METADATA in the wheel")


def requires_dist(package: dict) -> list[str]:
    """A wheel's Requires-Dist (the first wheel uv picked for the platform)."""
    wheels = package.get("wheels") or []
    if not wheels:
        sys.exit(f"torch_lock: {package['name']} {package['version']} has no wheel for {PLATFORM}")
    url = wheels[0]["url"]
    try:
        text = wheel_metadata(url)
    except OSError as err:
        sys.exit(f"torch_lock: cannot read the metadata of {url.rsplit('/', 1)[-1]} ({err})")
    return email.parser.Parser().parsestr(text).get_all("Requires-Dist") or []


def applicable(requirements: list[str], extras: set[str]) -> list[Requirement]:
    """The requirements whose markers hold on the platform, for no extra or one of `extras`."""
    kept = []
    for text in requirements:
        requirement = Requirement(text)
        if requirement.marker is None or any(requirement.marker.evaluate({**ENVIRONMENT, "extra": extra})
                                             for extra in sorted(extras) or [""]):
            requirement.marker = None
            kept.append(requirement)
    return kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build", choices=sorted(INDEXES))
    parser.add_argument("--uv", default=str(Path(sys.executable).parent / "uv"))
    args = parser.parse_args()
    main_lock = pins(ROOT / "requirements.lock")
    packages = {normalise(p["name"]): p for p in resolve(args.build, args.uv)}
    torch = packages["torch"]
    host = WHEEL_HOSTS[args.build]
    # uv passes over an index it cannot reach and takes torch from the next one: PyPI's is the CUDA 13.0 build
    if not any(wheel["url"].startswith(f"https://{host}/") for wheel in torch.get("wheels", [])):
        sys.exit(f"torch_lock: torch {torch['version']} did not come from {INDEXES[args.build]} (unreachable?)")
    extra = {name: p for name, p in packages.items() if name not in main_lock}
    # What torch and every package of the lock declare, markers evaluated with the extras asked of each.
    wanted: dict[str, set[str]] = {"torch": set()}
    declared: dict[str, list[Requirement]] = {}
    queue = ["torch"]
    while queue:
        name = queue.pop()
        declared[name] = applicable(requires_dist(packages[name]), wanted[name])
        for requirement in declared[name]:
            dependency = normalise(requirement.name)
            new_extras = set(requirement.extras) - wanted.get(dependency, set())
            if dependency in extra and (dependency not in wanted or new_extras):
                wanted.setdefault(dependency, set()).update(requirement.extras)
                queue.append(dependency)
    unreached = sorted(set(extra) - set(declared))
    if unreached:
        sys.exit(f"torch_lock: resolved but required by nothing read here: {', '.join(unreached)}")
    lines = [
        f"# torch {torch['version']} ({args.build}): the packages it needs beyond requirements.lock, installed with",
        f"# --no-deps after torch (make env TORCH={args.build}). Written by `make torch-lock TORCH={args.build}`"
        " (envs/torch_lock.py):",
        f"# uv pip compile of torch=={TORCH_VERSION} from {INDEXES[args.build]} for CPython {PYTHON} on {PLATFORM},",
        "# constrained by requirements.lock. What each package declares (its wheel's Requires-Dist, markers",
        "# evaluated for that platform), checked offline by tests/test_torch_locks.py:",
    ]
    for name in ["torch"] + sorted(n for n in declared if n != "torch"):
        for requirement in sorted({str(r) for r in declared[name]}):
            lines.append(f"# requires {name}=={packages[name]['version']}: {requirement}")
    lines += [f"{p['name']}=={p['version']}" for _, p in sorted(extra.items())]
    target = ROOT / f"requirements-{args.build}.lock"
    target.write_text("\n".join(lines) + "\n")
    print(f"wrote {target.name}: {len(extra)} packages beyond requirements.lock for torch {torch['version']}")


if __name__ == "__main__":
    main()
