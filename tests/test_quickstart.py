"""docs/quickstart.md works as written: its `<!-- quickstart -->` blocks run in page order as one bash script in a
scratch directory holding the wheel the page installs, and the verdict the page quotes is the card's.

The page's first command makes a virtual environment and `pip install`s the wheel into it. The test makes that
environment beforehand with the locked dependencies (from uv's cache, tests/distributions.py), so that the page's
`python3.11 -m venv` keeps them and its `pip install` resolves the wheel's dependencies against them and installs
posbias itself, as it would on a machine that already had them, in seconds instead of minutes of downloads."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from distributions import ROOT, build, locked_environment, one, user_environment

pytestmark = pytest.mark.slow  # an environment and an audit: make test starts this file first

PAGE = ROOT / "docs" / "quickstart.md"


def blocks() -> list[str]:
    return re.findall(r"^<!-- quickstart -->\n```bash\n(.*?)^```$", PAGE.read_text(encoding="utf-8"),
                      flags=re.M | re.S)


def quoted_verdict() -> str:
    """The verdict the page quotes (its > block), as one line without the Markdown."""
    quote = re.search(r"^> (\*\*.*?)\n\n", PAGE.read_text(encoding="utf-8"), flags=re.M | re.S).group(1)
    return " ".join(line.removeprefix("> ") for line in quote.splitlines()).replace("**", "")


@pytest.fixture(scope="module")
def walked(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    from posbias import __version__

    work = tmp_path_factory.mktemp("quickstart")
    wheel = one(build(tmp_path_factory.mktemp("dist")), f"posbias-{__version__}-py3-none-any.whl")
    assert f"pip install '{wheel.name}[mteb]'" in blocks()[0], "the page installs another version's wheel"
    shutil.copy(wheel, work)
    locked_environment(work / "posbias-env")
    script = "set -euo pipefail\n" + "\n".join(blocks())
    done = subprocess.run(["bash", "-c", script], cwd=work, capture_output=True, text=True,
                          env=user_environment(), timeout=900)
    assert done.returncode == 0, f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return work, done


def test_the_page_has_its_steps():
    assert len(blocks()) == 4


def test_every_command_runs_and_installs_posbias_from_the_wheel(walked):
    work, done = walked
    installed = subprocess.run([work / "posbias-env" / "bin" / "pip", "show", "-f", "posbias"], capture_output=True,
                               text=True, check=True).stdout
    assert "Location: " + str(work / "posbias-env") in installed  # not the checkout's editable install
    assert "usage: posbias audit" in done.stdout


def test_it_ends_with_the_exported_files_read_back_by_their_libraries(walked):
    work, done = walked
    audit = work / "my-audit"
    assert (audit / "audits" / "bi-encoder-all-MiniLM-L6-v2" / "card.html").is_file()
    assert sorted(p.name for p in (audit / "hub" / ".eval_results").iterdir()) == ["posbias-probes.yaml",
                                                                                 "posbias-sweep.yaml"]
    assert (audit / "hub" / "README.md").read_text().startswith("---\n")
    assert len(list((audit / "mteb" / "results").glob("*/*/Posbias*.json"))) == 2
    assert "read back by huggingface_hub" in done.stdout and "loaded back by mteb" in done.stdout


def test_the_quoted_verdict_is_the_cards(walked):
    work, _ = walked
    card = (work / "my-audit" / "audits" / "bi-encoder-all-MiniLM-L6-v2" / "card.html").read_text()
    said = " ".join(re.sub(r"<[^>]+>", "", re.search(r'<p class="verdict">(.*?)</p>', card).group(1)).split())
    assert quoted_verdict() in said.replace("&#x27;", "'")
