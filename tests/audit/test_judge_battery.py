"""The judge battery: recorded judgments replayed, and live judges (the mock backend's ideal judge and its echo,
which always reads the prompt's first tag: a judge that always prefers the first answer)."""

import json

import pytest

from posbias.audit import batteries
from posbias.audit.jobs import AuditJob
from posbias.audit.spec import parse_model_spec
from posbias.audit.steps import audit, write_reports
from posbias.errors import InputError
from posbias.judges.records import Judgment, write_judgments

QUESTIONS = 12


def primacy_records(path, share_biased: float):
    """A judge whose subject truly wins every comparison, but which prefers the first answer in both orders for
    the first `share_biased` of the questions (primacy pairs), and judges right in the rest (consistent)."""
    judgments = []
    for q in range(QUESTIONS):
        biased = q < share_biased * QUESTIONS
        judgments += [Judgment("j", f"q{q}", "s", "o", "s", "first"),
                      Judgment("j", f"q{q}", "o", "s", "s", "first" if biased else "second")]
    write_judgments(path, judgments)


def run(tmp_path, spec, name, **job):
    return audit(AuditJob(model=f"{spec}{'&' if '?' in spec else '?'}name={name}", out=str(tmp_path / "out"),
                          cache_dir=str(tmp_path / "cache"), **job))


def test_a_replayed_primacy_judge(tmp_path):
    primacy_records(tmp_path / "records.jsonl", share_biased=0.5)
    (record,) = run(tmp_path, f"judge-replay:{tmp_path / 'records.jsonl'}", "replayed")
    judged = record["extra"]["judge_metrics"]
    assert judged["pairs"]["primacy"] == 6 and judged["pairs"]["consistent"] == 6
    assert judged["position_consistency"] == 0.5 and judged["preference_fairness"] == -0.5
    # the subject always wins read first, half the time read second
    assert record["summary"]["reference_mean"] == 1.0 and record["summary"]["worst"] == 0.5
    assert record["extra"]["decision_inputs"] == QUESTIONS and record["extra"]["model_inputs"] == 2 * QUESTIONS


def test_both_orders_makes_the_curve_flat_at_twice_the_cost(tmp_path):
    primacy_records(tmp_path / "records.jsonl", share_biased=0.5)
    spec = f"judge-replay:{tmp_path / 'records.jsonl'}"
    run(tmp_path, spec, "plain")
    (mitigated,) = run(tmp_path, spec, "both", mitigation={"kind": "both_orders"}, mitigates="plain")
    summary = mitigated["summary"]
    assert summary["psi"] == 0 and summary["reference_mean"] == summary["worst"] == pytest.approx(0.75)  # ties: 0.5
    write_reports(tmp_path / "out")
    table = (tmp_path / "out" / "mitigations.csv").read_text()
    assert "both orders" in table and ",2.0" in table


@pytest.fixture
def tiny_world(monkeypatch):
    """Three questions in the retrieval records' format, in place of the embedded world's (which a MiniLM
    retrieves)."""
    records = [{"question": f"what is q{q}", "answers": [f"a{q}"],
                "nq_annotated_gold": {"long_answer": f"q{q} is a{q}."},
                "ctxs": [{"text": f"q{q} is a{q}.", "hasanswer": True},
                         {"text": f"q{q + 1} is b.", "hasanswer": False}]}
               for q in range(3)]
    monkeypatch.setattr(batteries, "_embedded_qa_records", lambda n, depth: records[:n])


@pytest.mark.parametrize("mock, pc, pf, first, second", [("oracle", 1.0, 0.0, 1.0, 1.0),
                                                          ("echo", 0.0, -1.0, 1.0, 0.0)])
def test_a_live_judge(tmp_path, tiny_world, mock, pc, pf, first, second):
    (record,) = run(tmp_path, f"judge:mock:{mock}?wrapper=none", mock, settings={"judge": {"n_questions": 3}})
    judged = record["extra"]["judge_metrics"]
    assert (judged["position_consistency"], judged["preference_fairness"]) == (pc, pf)
    assert judged["repetition_stability"] is None  # asked once each
    assert (record["summary"]["reference_mean"], record["summary"]["worst"]) == (first, second)
    values = json.loads((tmp_path / "out" / mock / "judge.json").read_text())
    assert values["n_units"] == 3


def test_judge_specs():
    ref = parse_model_spec("judge-replay:released:mtbench-position-bias?judge=gpt-4-0613")
    assert (ref.kind, ref.capability, ref.options) == ("judge-replay", "judge", {"judge": "gpt-4-0613"})
    assert parse_model_spec("judge:openai_chat:gpt-4o?max_retries=3").capability == "judge"
    with pytest.raises(InputError, match="unknown option 'window'"):
        parse_model_spec("judge-replay:x.jsonl?window=3")


def test_unknown_released_records_are_named(tmp_path):
    with pytest.raises(InputError, match="no such released records; shipped: devbench-position-bias"):
        run(tmp_path, "judge-replay:released:nope?judge=x", "nope")


def test_both_orders_is_for_judges_only(tmp_path):
    with pytest.raises(InputError, match="both_orders applies to models of capability judge"):
        run(tmp_path, "reader:mock:oracle", "r", mitigation={"kind": "both_orders"}, mitigates="base")


def test_a_live_judge_asked_again_samples_with_a_seed_per_repetition(tmp_path, tiny_world):
    # the mock answers alike whatever the seed; what is checked is that each repetition is its own request (its
    # own cache entry) and that a local backend, which decodes greedily only, refuses to sample
    (record,) = run(tmp_path, "judge:mock:oracle?wrapper=none", "sampled",
                    settings={"judge": {"n_questions": 3, "repetitions": 2, "temperature": 0.7}})
    assert record["extra"]["judge_metrics"]["repetition_stability"] == 1.0
    assert record["extra"]["model_inputs"] == 12 and record["extra"]["decision_inputs"] == 6
    with pytest.raises(InputError, match="expected a number above 0"):
        run(tmp_path, "judge:mock:oracle?wrapper=none", "none", settings={"judge": {"repetitions": 0}})


def test_combine_takes_its_choices_only(tmp_path):
    with pytest.raises(InputError, match="'all' is not one of none, both_orders"):
        run(tmp_path, "judge:mock:oracle?wrapper=none", "x", settings={"judge": {"combine": "all"}})


@pytest.mark.parametrize("k, orders, mean", [(2, "rotations", 0.75), (3, "rotations", 1.0)])
def test_permutation_self_consistency_takes_the_majority_of_the_drawn_orders(tmp_path, k, orders, mean):
    # the half-biased judge: read both ways it disagrees with itself on half the questions; two rotated orders tie
    # there (as both_orders does), three (subject first, second, first) give the subject two votes of three
    primacy_records(tmp_path / "records.jsonl", share_biased=0.5)
    spec = f"judge-replay:{tmp_path / 'records.jsonl'}"
    run(tmp_path, spec, "plain")
    (mitigated,) = run(tmp_path, spec, "psc", mitigates="plain",
                       mitigation={"kind": "permutation_self_consistency", "k": k, "orders": orders})
    assert mitigated["summary"]["psi"] == 0 and mitigated["summary"]["reference_mean"] == pytest.approx(mean)
    assert mitigated["extra"]["decision_inputs"] == k * QUESTIONS


def test_shuffled_orders_are_drawn_per_comparison_and_seeded(tmp_path):
    from posbias.audit.judge_battery import drawn_orders
    from posbias.judges.metrics import ChoicePair

    settings = {"consistency_k": 5, "consistency_orders": "shuffles", "consistency_seed": 0}
    pairs = [ChoicePair(f"q{q}", ("o", "s"), 0, None, None) for q in range(20)]
    drawn = [drawn_orders(settings)(pair) for pair in pairs]
    assert drawn == [drawn_orders(settings)(pair) for pair in pairs]  # seeded
    assert len({tuple(d) for d in drawn}) > 1 and all(len(d) == 5 and set(d) <= {0, 1} for d in drawn)
    assert drawn != [drawn_orders({**settings, "consistency_seed": 1})(pair) for pair in pairs]
