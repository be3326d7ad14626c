"""The regression check (`posbias regress`) and the reproduction table (`posbias regress --reproduction`), on small
tables written in the workflow's real formats (`posbias.reporting.tables.build_table`, as the table jobs write
them)."""

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from posbias import expected_values, regression, reproduction
from posbias.cli import main
from posbias.config import ConfigError, load_config
from posbias.errors import InputError
from posbias.reporting.tables import Column, Row, Significance, build_table

ROOT = Path(__file__).resolve().parents[1]
DEMO_EXPECTED = ROOT / "config" / "regression" / "demo.yaml"
SEEDS_EXPECTED = ROOT / "config" / "regression" / "seeds.yaml"


def write_table1(results: Path, maxp_values=(1.0, 0.5, 1.0, 0.5), published=None) -> Path:
    """A Table 1 CSV as the workflow writes it: BM25, FirstP and MaxP on four dev queries (RR@10), and optionally a
    row of published numbers (`reference_rows`)."""
    values = {"retriever": (0.5, 0.5, 0.25, 1.0), "firstp": (1.0, 0.5, 0.5, 0.5), "maxp": maxp_values}
    per_query = pd.DataFrame([{"qid": f"q{i}", "system": system, "queryset": "dev", "metric": "RR@10", "value": v,
                               "setting": "zero-shot"}
                              for system, vs in values.items() for i, v in enumerate(vs)])
    rows = [Row("retriever", "BM25 (retriever)"), Row("firstp", "FirstP"),
            Row("maxp", "MaxP", gain_over="firstp", tests={"a": "firstp"})]
    if published is not None:
        rows.append(Row("published:0", "MaxP (published)", published=published))
    table = build_table(per_query, rows, [Column("dev", "RR@10", 0.05, "dev RR@10")], Significance())
    results.mkdir(parents=True, exist_ok=True)
    path = results / "table1.csv"
    table.to_csv(path, index=False)
    return path


EXPECTATIONS = """\
# expectations of a small table (a header comment, kept by --write-expected)
tolerances:
  exact: {abs: 1.0e-6, why: "BM25 is deterministic"}
  trained: {abs: 0.05, why: "two seeds differ by this much"}
files:
  table1:
    path: table1.csv
    keys: [system, column]
    value: value
    cells:
      - {system: retriever, column: "dev RR@10", expected: 0.5625, tolerance: exact}
      - {system: firstp, column: "dev RR@10", expected: 0.625, tolerance: trained}
      - {system: maxp, column: "dev RR@10", expected: 0.73, tolerance: trained}
"""


def write_expectations(tmp_path: Path, text: str = EXPECTATIONS) -> Path:
    path = tmp_path / "expected.yaml"
    path.write_text(text)
    return path


def regress(*args) -> int:
    return main(["regress", *map(str, args)])


def test_cells_within_their_tolerance_pass_and_the_table_is_printed_and_written(tmp_path, capsys):
    write_table1(tmp_path / "results")  # MaxP's mean: 0.75, 0.02 from 0.73
    assert regress("--results", tmp_path / "results", "--expected", write_expectations(tmp_path)) == 0
    out = capsys.readouterr().out
    assert "table1: maxp / dev RR@10" in out and "+0.02" in out and "FAIL" not in out
    assert "3 of 3 cells within tolerance." in out
    written = pd.read_csv(tmp_path / "results" / "regression.csv")
    assert list(written.columns) == regression.COLUMNS
    assert list(written["result"]) == ["pass"] * 3
    assert written.loc[2, "observed"] == pytest.approx(0.75) and written.loc[2, "difference"] == pytest.approx(0.02)
    assert (tmp_path / "results" / "regression.md").read_text().startswith("| cell | expected |")


def test_a_cell_beyond_its_tolerance_fails_and_the_command_exits_1(tmp_path, capsys):
    write_table1(tmp_path / "results", maxp_values=(1.0, 1.0, 1.0, 0.5))  # 0.875: 0.145 above 0.73
    assert regress("--results", tmp_path / "results", "--expected", write_expectations(tmp_path)) == 1
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if "maxp" in line)
    assert "FAIL" in line and "+0.145" in line and "outside ±0.05 (trained)" in line
    assert "2 of 3 cells within tolerance, 1 FAILED." in out


def test_the_bound_is_abs_plus_rel_times_the_expected_value():
    tolerance = regression.Tolerance(abs=0.01, rel=0.1)
    assert tolerance.allows(2.0, 2.21) and not tolerance.allows(2.0, 2.22)
    assert regression.Tolerance(abs=1e-6).allows(0.5625, 0.5625 + 1e-6)
    assert not regression.Tolerance(abs=1e-6).allows(0.5625, 0.5625 + 2e-6)
    # an undefined value (a test with every pair tied) is expected as such: NaN passes only against NaN
    assert tolerance.allows(math.nan, math.nan) and not tolerance.allows(math.nan, 0.0)
    assert not tolerance.allows(0.0, math.nan)


@pytest.mark.parametrize("cell, note", [
    ("{system: sump, column: 'dev RR@10', expected: 0.7, tolerance: trained}",
     "table1.csv has no row with system=sump, column=dev RR@10"),
    ("{system: maxp, column: 'dev RR@10', value: mrr, expected: 0.7, tolerance: trained}",
     "table1.csv has no column 'mrr'"),
    ("{system: maxp, column: 'dev RR@10', value: gain_over, expected: 0.7, tolerance: trained}",
     "gain_over of the row with system=maxp, column=dev RR@10 is 'firstp', not a number"),
    ("{system: retriever, column: 'dev RR@10', value: n_queries, tolerance: trained}", "no expected value recorded"),
])
def test_a_cell_that_cannot_be_read_fails_with_a_note_naming_it(tmp_path, capsys, cell, note):
    write_table1(tmp_path / "results")
    text = EXPECTATIONS + f"      - {cell}\n"
    assert regress("--results", tmp_path / "results", "--expected", write_expectations(tmp_path, text)) == 1
    written = pd.read_csv(tmp_path / "results" / "regression.csv", keep_default_na=False)
    failed = written[written["result"] == "FAIL"]
    assert len(failed) == 1 and note in failed["note"].iloc[0]
    assert note in capsys.readouterr().out


def test_a_missing_results_file_fails_its_cells_naming_the_file(tmp_path, capsys):
    (tmp_path / "results").mkdir()
    assert regress("--results", tmp_path / "results", "--expected", write_expectations(tmp_path)) == 1
    out = capsys.readouterr().out
    assert out.count("  FAIL  ") == 3 and f"no file {tmp_path / 'results' / 'table1.csv'}" in out


@pytest.mark.parametrize("old, new, message", [
    ("tolerance: trained}\n", "tolerance: seeds}\n", "files.table1.cells[1].tolerance: 'seeds' is not one of"),
    ("{system: firstp, column: \"dev RR@10\", ", "{system: firstp, ", "files.table1.cells[1]: no column"),
    ("expected: 0.625", "expected: high", "files.table1.cells[1].expected: must be a number"),
    ("abs: 0.05", "abs: -0.05", "tolerances.trained.abs: must be a finite number >= 0"),
    ("{abs: 1.0e-6, ", "{", "tolerances.exact: give abs or rel"),
    (', why: "BM25 is deterministic"', "", "tolerances.exact.why: required"),
    ("    keys: [system, column]\n", "", "files.table1.keys: must be a non-empty list"),
    ("    path: table1.csv\n", "    path: ../table1.csv\n", "files.table1.path: '../table1.csv' must be relative"),
    ("files:", "file:", "file: unknown key; known: files, tolerances"),
    ("keys: [system, column]", "keys: [system, column", "not valid YAML"),
    ("expected: 0.73", "expected: 0.73, colour: red", "files.table1.cells[2].colour: unknown key"),
])
def test_a_malformed_expectations_file_is_one_line_naming_the_file_and_key_and_exit_2(tmp_path, capsys, old, new,
                                                                                      message):
    write_table1(tmp_path / "results")
    assert old in EXPECTATIONS
    path = write_expectations(tmp_path, EXPECTATIONS.replace(old, new, 1))
    with pytest.raises(SystemExit) as exit_info:
        regress("--results", tmp_path / "results", "--expected", path)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"posbias regress: error: {path}") and message in err and "\n" not in err


def test_a_results_directory_that_is_not_there_is_exit_2(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        regress("--results", tmp_path / "nowhere", "--expected", write_expectations(tmp_path))
    assert exit_info.value.code == 2
    assert "--results" in capsys.readouterr().err


def test_write_expected_refreshes_the_values_and_keeps_cells_tolerances_reasons_and_header(tmp_path, capsys):
    write_table1(tmp_path / "results", maxp_values=(1.0, 1.0, 1.0, 0.5))
    text = EXPECTATIONS + "      - {system: sump, column: 'dev RR@10', expected: 0.5, tolerance: trained}\n"
    path = write_expectations(tmp_path, text)
    # sump is not in the table: its old value is kept and listed, and the exit status says so
    assert regress("--results", tmp_path / "results", "--expected", path, "--write-expected") == 1
    out = capsys.readouterr().out
    assert "3 expected values read" in out and "(1 changed)" in out and "kept the old value of table1: sump" in out
    refreshed = path.read_text()
    assert refreshed.startswith("# expectations of a small table (a header comment, kept by --write-expected)\n")
    data = yaml.safe_load(refreshed)
    assert data["tolerances"] == {"exact": {"abs": 1e-6, "why": "BM25 is deterministic"},
                                  "trained": {"abs": 0.05, "why": "two seeds differ by this much"}}
    assert [c["expected"] for c in data["files"]["table1"]["cells"]] == [0.5625, 0.625, 0.875, 0.5]
    assert [c["tolerance"] for c in data["files"]["table1"]["cells"]] == ["exact", "trained", "trained", "trained"]
    # the refreshed file passes on the results it was read from (but for the row that is not there)
    assert regress("--results", tmp_path / "results", "--expected", path) == 1
    assert capsys.readouterr().out.count("  FAIL  ") == 1


def test_written_numbers_read_back_as_the_same_numbers():
    for value in (0.1, 1e-6, 2.5e-12, 123456.789, -0.0003, math.inf):
        assert yaml.safe_load(expected_values._yaml_scalar(value)) == float(f"{value:.10g}")
    assert math.isnan(yaml.safe_load(expected_values._yaml_scalar(math.nan)))
    for text in ("dev RR@10", "yes", "null", "1.5", "a: b", "# x", "PARADE Attn (BERT)", "position_sweep"):
        assert yaml.safe_load(expected_values._yaml_scalar(text)) == text


# --- the reproduction table ----------------------------------------------------------------------------------------

SECTION = {"table1": {"source": "a paper, Table 1", "tolerance": {"abs": 0.01, "why": "its own reruns"},
                      "values": {"maxp": {"dev RR@10": 0.745}, "firstp": {"dev RR@10": 0.6},
                                 "sump": {"dev RR@10": 0.5}}}}


def test_the_reproduction_table_sets_reproduced_beside_published_and_skips_published_rows(tmp_path):
    # the table's own published row for MaxP (0.1) must not be taken for the reproduction
    write_table1(tmp_path, published={"dev RR@10": 0.1})
    frame = reproduction.reproduction_table(SECTION, tmp_path).set_index("system")
    assert list(frame.columns) == [c for c in reproduction.REPRODUCTION_COLUMNS if c != "system"]
    assert frame.loc["maxp", "reproduced"] == pytest.approx(0.75)
    assert frame.loc["maxp", "difference"] == pytest.approx(0.005)  # reproduced minus published
    assert frame.loc["maxp", "within_tolerance"] == "yes"
    assert frame.loc["firstp", "difference"] == pytest.approx(0.025)
    assert frame.loc["firstp", "within_tolerance"] == "no"
    assert frame.loc["sump", "within_tolerance"] == "not computed" and frame.loc["sump", "reproduced"] is None
    assert "no row with system=sump" in frame.loc["sump", "note"]
    assert set(frame["source"]) == {"a paper, Table 1"} and set(frame["tolerance"]) == {"±0.01"}


def test_the_reproduction_of_a_paper_config_reads_its_published_numbers(tmp_path, capsys):
    """config/paper/farrelevant.yaml's Table 4 against a results directory holding MaxP's zero-shot cell only."""
    per_query = pd.DataFrame([{"qid": f"q{i}", "system": "maxp", "queryset": "farrelevant", "metric": "RR",
                               "value": v, "setting": "zero-shot"} for i, v in enumerate((0.5, 0.1, 0.2, 0.4))])
    table = build_table(per_query, [Row("maxp", "MaxP")], [Column("farrelevant", "RR", 0.01, "MRR zero-shot")])
    table.to_csv(tmp_path / "table4.csv", index=False)
    assert main(["regress", "--reproduction", "--config", str(ROOT / "config/paper/farrelevant.yaml"),
                 "--results", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    maxp = next(line for line in out.splitlines() if line.startswith("table4  maxp ") and "zero-shot" in line)
    assert maxp.split()[4:8] == ["0.3", "0.297", "+0.003", "±0.02"] and maxp.split()[8] == "yes"
    written = pd.read_csv(tmp_path / "reproduction.csv")
    assert (written["within_tolerance"] == "not computed").sum() == len(written) - 1
    assert "1 of" in out and "within tolerance" in out


def test_the_reproduction_needs_a_config_with_published_numbers(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["regress", "--reproduction", "--config", str(ROOT / "config.yaml"), "--results", str(tmp_path)])
    assert exit_info.value.code == 2
    assert "no reproduction section" in capsys.readouterr().err


@pytest.mark.parametrize("values, message", [
    ({"maxq": {"MRR zero-shot": 0.1}}, "reproduction.table4.values.maxq: not a row of tables.table4"),
    ({"maxp": {"MRR zeroshot": 0.1}}, "reproduction.table4.values.maxp: 'MRR zeroshot' is not a header"),
])
def test_published_numbers_must_name_a_row_and_a_column_of_their_table(values, message):
    with pytest.raises(ConfigError, match=message):
        load_config(ROOT / "config/paper/farrelevant.yaml", overrides={"reproduction": {"table4": {"values": values}}})


def test_the_paper_configs_type_in_the_studys_table1_and_table4():
    study = load_config(ROOT / "config/paper/study.yaml").data["reproduction"]["table1"]
    assert study["values"]["parade_attn"] == {"MS MARCO dev MRR": 0.416, "TREC DL 2019-2021 NDCG@10": 0.652,
                                              "Robust04 title NDCG@20": 0.503, "Robust04 description NDCG@20": 0.556}
    assert study["tolerance"]["why"] and "Table 1" in study["source"]
    far = load_config(ROOT / "config/paper/farrelevant.yaml").data["reproduction"]["table4"]
    assert far["values"]["maxp"] == {"MRR zero-shot": 0.297, "MRR fine-tuned": 0.328}
    assert "Table 4" in far["source"]


# --- the demo's expectations ---------------------------------------------------------------------------------------

def test_the_demo_expectations_read_and_name_tables_the_default_config_writes():
    expectations = regression.read_expectations(DEMO_EXPECTED)
    assert all(cell.expected is not None for cell in expectations.cells)
    assert all(tolerance.why for tolerance in expectations.tolerances.values())
    config = load_config(ROOT / "config.yaml")
    written = {f"{table}.csv" for table in config.data["tables"]} | {"sweep.csv", "probes/probes.csv"}
    written |= {f"litm/{task}_{size[key]}.csv" for task, key in (("qa", "k"), ("kv", "n"))
                for size in config.data["litm"][task]["sizes"]}
    written |= {"audit/leaderboard.csv"} if config.audit.models else set()
    written |= {"audit/mitigations.csv"} if config.audit.mitigated() else set()
    assert {group.path for group in expectations.groups} <= written
    for needed in ("table1.csv", "table4.csv", "table7.csv", "sweep.csv", "probes/probes.csv"):
        assert needed in {group.path for group in expectations.groups}


def test_make_demo_ends_with_the_regression_check():
    makefile = (ROOT / "Makefile").read_text()
    recipe = makefile.split("\ndemo:")[1].split("\n\n")[0].strip().splitlines()
    assert recipe[-1].split()[-4:] == ["--results", "results", "--expected", "config/regression/demo.yaml"]
    assert "posbias regress" in recipe[-1]


def test_an_input_error_from_the_reader_names_the_file(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        regression.read_expectations(tmp_path / "absent.yaml")


def write_results(expectations: regression.Expectations, results: Path, random: bool) -> None:
    """A results directory in the real CSV formats holding every cell's expected value, or (`random`) the random
    baseline's level in every cell that gives one: each trained system replaced by the random baseline."""
    for group in expectations.groups:
        rows: dict[tuple, dict] = {}
        for cell in group.cells:
            value = cell.random if random and cell.random is not None else cell.expected
            row = rows.setdefault(tuple(str(v) for v in cell.where.values()), dict(cell.where))
            row[cell.value] = "" if math.isnan(value) else value  # pandas writes NaN as nothing
        path = results / group.path
        path.parent.mkdir(parents=True, exist_ok=True)
        pd.DataFrame(list(rows.values())).to_csv(path, index=False)


@pytest.mark.parametrize("path, at_least", [(DEMO_EXPECTED, 60), (SEEDS_EXPECTED, 30)])
def test_a_random_baseline_fails_every_trained_cell_and_the_expected_values_pass(tmp_path, path, at_least):
    """Issue 46, point 4: the bands tell a trained model from a random one, in the same-seed file (the demo) and
    in the across-seeds one."""
    expectations = regression.read_expectations(path)
    trained = {cell.name for cell in expectations.cells if cell.random is not None}
    assert len(trained) >= at_least
    write_results(expectations, tmp_path / "random", random=True)
    results = regression.check(expectations, tmp_path / "random").set_index("cell")["result"]
    assert all(results[name] == regression.FAIL for name in trained)
    assert all(results[c.name] == regression.PASS for c in expectations.cells if c.name not in trained)
    write_results(expectations, tmp_path / "own", random=False)
    assert (regression.check(expectations, tmp_path / "own")["result"] == regression.PASS).all()


def test_a_cell_whose_band_reaches_its_random_level_is_refused(tmp_path, capsys):
    text = EXPECTATIONS.replace("expected: 0.73, tolerance: trained}", "expected: 0.73, tolerance: trained, "
                                                                      "random: 0.7}")
    with pytest.raises(SystemExit) as exit_info:
        regress("--results", tmp_path, "--expected", write_expectations(tmp_path, text))
    error = capsys.readouterr().err
    assert exit_info.value.code == 2
    assert "files.table1.cells[2]" in error and "reaches the random level 0.7" in error


def test_write_expected_keeps_the_random_levels(tmp_path, capsys):
    text = EXPECTATIONS.replace("expected: 0.73, tolerance: trained}", "expected: 0.73, tolerance: trained, "
                                                                      "random: 0.4}")
    path = write_expectations(tmp_path, text)
    write_table1(tmp_path / "results")
    assert regress("--results", tmp_path / "results", "--expected", path, "--write-expected") == 0
    (maxp,) = [c for c in regression.read_expectations(path).cells if c.where["system"] == "maxp"]
    assert maxp.random == 0.4 and maxp.expected == pytest.approx(0.75)


def test_write_expected_from_several_seeds_takes_their_mean_and_prints_the_pooled_spread(tmp_path, capsys):
    """The across-seeds file's expected values: the mean of one results directory per seed, and per tolerance the
    pooled standard deviation that sizes its band."""
    path = write_expectations(tmp_path)
    seeds = [(1.0, 1.0, 1.0, 0.5), (1.0, 0.5, 1.0, 0.5), (1.0, 1.0, 0.5, 0.5)]
    for seed, values in enumerate(seeds):
        write_table1(tmp_path / f"seed{seed}", maxp_values=values)
    directories = [tmp_path / f"seed{seed}" for seed in range(3)]
    assert regress("--results", *directories, "--expected", path, "--write-expected") == 0
    out = capsys.readouterr().out
    assert "the mean of 3 results directories" in out
    cells = {c.name: c.expected for c in regression.read_expectations(path).cells}
    # maxp's RR@10 per seed: 0.875, 0.75, 0.75
    assert cells["table1: maxp / dev RR@10"] == pytest.approx((0.875 + 0.75 + 0.75) / 3)
    # trained cells: FirstP's variance 0, MaxP's that of (0.875, 0.75, 0.75); the exact cell's its own
    pooled = math.sqrt((0 + np.var([0.875, 0.75, 0.75], ddof=1)) / 2)
    assert f"tolerance trained: pooled standard deviation of one run's value {pooled:.4f} over 2 cells" in out
    assert "tolerance exact: pooled standard deviation of one run's value 0.0000 over 1 cells" in out
    with pytest.raises(SystemExit) as exit_info:  # a check reads one directory
        regress("--results", *directories, "--expected", path)
    assert exit_info.value.code == 2


def test_the_across_seeds_file_states_its_seeds_and_formula_and_each_band_is_its_formula():
    """config/regression/seeds.yaml: expected values are the mean of seeds 1-3, each tolerance z x s x sqrt(1/k +
    1/m) with the pooled s it states (so a band is what the header says it is, not a number typed in apart)."""
    text = SEEDS_EXPECTED.read_text()
    assert "seeds 1, 2 and 3" in text and "z x s x sqrt(1/k + 1/m)" in text
    expectations = regression.read_expectations(SEEDS_EXPECTED)
    for name, tolerance in expectations.tolerances.items():
        match = re.search(r"s = ([0-9.]+), z = 3, k = 1, m = 3", tolerance.why)
        assert match, name
        assert tolerance.abs == pytest.approx(3 * float(match.group(1)) * math.sqrt(1 + 1 / 3), abs=5e-4)


def test_write_expected_keeps_a_cell_that_is_undefined_in_some_seeds_only(tmp_path, capsys):
    path = write_expectations(tmp_path)
    write_table1(tmp_path / "seed0", maxp_values=(1.0, 1.0, 1.0, 0.5))
    write_table1(tmp_path / "seed1", maxp_values=(1.0, 1.0, 1.0, 0.5))
    frame = pd.read_csv(tmp_path / "seed1" / "table1.csv")
    frame.loc[frame["system"] == "maxp", "value"] = float("nan")
    frame.to_csv(tmp_path / "seed1" / "table1.csv", index=False)
    assert regress("--results", tmp_path / "seed0", tmp_path / "seed1", "--expected", path, "--write-expected") == 1
    assert "kept the old value of table1: maxp / dev RR@10: undefined (NaN) in some" in capsys.readouterr().out
    (maxp,) = [c for c in regression.read_expectations(path).cells if c.where["system"] == "maxp"]
    assert maxp.expected == 0.73
