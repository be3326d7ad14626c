"""`posbias plan` on the command line: the table, JSON and Markdown, a page's block rewritten, and bad input as one
line with exit status 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from posbias.cli import main
from posbias.planning.cli import PAGE_BEGIN, PAGE_END

ROOT = Path(__file__).resolve().parents[2]
TINY = str(ROOT / "config" / "test" / "tiny.yaml")


def run(capsys, *argv) -> tuple[int, str, str]:
    try:
        status = main(list(argv))
    except SystemExit as exit_:
        status = exit_.code
    out, err = capsys.readouterr()
    return status, out, err


def test_json_totals_match_the_rows(capsys):
    status, out, _ = run(capsys, "plan", "--config", TINY, "results/table1.tex", "--json")
    plan = json.loads(out)
    assert status == 0 and plan["targets"] == ["results/table1.tex"]
    rows = {row["rule"]: row for row in plan["rules"]}
    assert plan["totals"]["jobs"] == sum(r["submitted"] + r["local"] for r in rows.values())
    assert rows["table1"]["local"] == 1 and rows["train"]["submitted"] == 6
    assert plan["totals"]["gpu_hours"] == pytest.approx(sum(r["gpu_hours"] for r in rows.values()))
    # every timed rule names where its hours come from
    assert all(r["hours_from"] for r in rows.values() if r["submitted"])
    assert all(s for s in plan["sources"].values())


def test_the_table_names_the_device_and_the_sources(capsys):
    status, out, _ = run(capsys, "plan", "--config", TINY, "results/table1.tex", "--gpu", "h200")
    assert status == 0
    assert "device: NVIDIA H200 (--gpu h200)" in out and "profiles/slurm/profile.yaml" in out
    assert out.splitlines()[4].split()[:3] == ["rule", "cluster", "local"]
    assert "Totals" in out and "GPU-hours" in out and "CPU-hours" in out


def test_markdown_into_a_page_replaces_only_its_block(capsys, tmp_path):
    page = tmp_path / "page.md"
    page.write_text(f"# a page\n\n## What it costs\n\n{PAGE_BEGIN}\nold\n{PAGE_END}\n\n## After\n")
    status, _, _ = run(capsys, "plan", "--config", TINY, "results/table1.tex", "--markdown", "--into", str(page))
    text = page.read_text()
    assert status == 0 and "old" not in text and text.startswith("# a page\n") and text.endswith("## After\n")
    assert "| jobs |" in text and "`posbias plan --config" in text and f"\n{PAGE_END}\n" in text


@pytest.mark.parametrize("argv, message", [
    (["results/no-such-table.tex"], "no-such-table.tex"),
    (["--gpu", "a100"], "--gpu a100: no measurements"),
    (["--markdown", "--into", "nowhere.md"], "--into nowhere.md: no such file"),
    (["--into", "page.md"], "--into needs --markdown"),
])
def test_bad_input_is_one_line_and_status_2(capsys, argv, message):
    status, out, err = run(capsys, "plan", "--config", TINY, *argv)
    assert status == 2 and message in err and not out
    assert len([line for line in err.splitlines() if line.startswith("posbias plan: error:")
                or "error:" in line]) == 1


def test_a_config_that_is_not_there(capsys):
    status, _, err = run(capsys, "plan", "--config", "no-such.yaml")
    assert status == 2 and "--config no-such.yaml: no such file" in err
