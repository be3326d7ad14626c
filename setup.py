"""The workflow (Snakefile, rules, scripts, report captions, profiles, configs) lives at the top of the repository, as
the design card fixes; a wheel carries a copy of it inside the package, at posbias/workflow/files, so that an
installed `posbias workflow` runs it without the clone. Everything else is in pyproject.toml."""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

# What the workflow needs besides the package, relative to the repository's root (MANIFEST.in puts the same in the
# sdist, from which the wheel is built): the benchmarks' measurement files are the rates `posbias plan` reads
# (posbias/planning/measurements.yaml names them).
WORKFLOW = ("Snakefile", "config.yaml", "rules", "scripts", "report", "profiles", "config", "envs/posbias.yaml",
            "benchmarks/tables", "benchmarks/gpu")


class BuildWithWorkflow(build_py):
    def run(self):
        super().run()
        if self.editable_mode:  # an editable install runs the checkout's own workflow
            return
        root, target = Path(__file__).resolve().parent, Path(self.build_lib) / "posbias" / "workflow" / "files"
        shutil.rmtree(target, ignore_errors=True)
        for name in WORKFLOW:
            source = root / name
            if source.is_dir():
                # scripts/posbias is a link to the package, which the installed workflow imports instead
                shutil.copytree(source, target / name, symlinks=False,
                                ignore=lambda folder, names: [n for n in names if n == "__pycache__" or
                                                              (Path(folder) / n).is_symlink()])
            else:
                (target / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target / name)


setup(cmdclass={"build_py": BuildWithWorkflow})
