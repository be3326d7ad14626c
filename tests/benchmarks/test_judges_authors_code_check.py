"""The check against the authors' analysis, its plumbing only: a stand-in for their function (the real one lives in
their repository and is never copied here) that answers as a set of judge averages, right or off by 0.01."""

import importlib.util
import pickle
import sys
from pathlib import Path

import pandas as pd
import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
STAND_IN = '''
import pandas as pd
from posbias.judges.cell_averages import judge_cell_averages
from posbias.judges.records import Judgment

OFFSET = {offset}

def calculate_positional_consistency_and_preference_score(data, reference_model):
    letters = {{"A": "first", "B": "second", "C": "tie", "D": "neither", "N": None}}
    found = []
    for column in (c for c in data.columns if c.startswith("extracted_")):
        for cmp_index, task, letter in zip(data["cmp_index"], data["task"], data[column]):
            question, first, second = cmp_index.split(";")
            subject = second if first.lower() == reference_model else first
            found.append(Judgment(column[len("extracted_"):], question, first, second, subject, letters[letter], 0,
                                  task))
    rows = judge_cell_averages(found)
    return None, pd.DataFrame({{
        "Judge": [row["judge"] for row in rows],
        "Average Positional Consistency": [row["position_consistency"] + OFFSET for row in rows],
        "Positional Consistency Std": [row["position_consistency_std"] for row in rows],
        "Average Positional Preference Score": [row["preference_fairness"] for row in rows],
        "Positional Preference Score Std": [row["preference_fairness_std"] for row in rows],
        "Average Extraction Successful Rate": [row["extraction_rate"] for row in rows]}})
'''


def load_check():
    spec = importlib.util.spec_from_file_location("judges_authors_code_check",
                                                  BENCHMARKS / "judges_authors_code_check.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def write_clone(root: Path, offset: float) -> Path:
    run = root / "judgment_data" / "data_MTBench_position_bias" / "MTBench_data_infer_input_2680_record0_judge-x_3"
    run.mkdir(parents=True)
    answers = {"81;vicuna-13b-v1.3;alpaca-13b": "[[A]]", "81;alpaca-13b;vicuna-13b-v1.3": "[[B]]",
               "82;vicuna-13b-v1.3;alpaca-13b": "[[A]]", "82;alpaca-13b;vicuna-13b-v1.3": "[[A]]"}
    (run / "tmp.pkl").write_bytes(pickle.dumps(answers))
    table = root / "QA_data" / "full_data" / "MTBench"
    table.mkdir(parents=True)
    pd.DataFrame({"index": [81, 82], "task": ["writing", "math"]}).to_excel(table / "MTBench_data.xlsx", index=False)
    module = root / "judging_the_judges" / "calculate_consistency_and_preference"
    module.mkdir(parents=True)
    (module / "consistency_preference_calculation.py").write_text(STAND_IN.format(offset=offset))
    return root


@pytest.mark.parametrize("offset, status", [(0.0, 0), (0.01, 1)])
def test_the_check_passes_on_agreement_and_fails_on_a_difference(tmp_path, capsys, offset, status):
    assert load_check().main(["--release", str(write_clone(tmp_path, offset))]) == status
    assert "MTBench position_bias repetition 1: 1 judges" in capsys.readouterr().out
