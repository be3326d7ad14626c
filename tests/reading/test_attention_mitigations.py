"""Attention-level reader mitigations (`posbias.reading.attention_mitigations`) on tiny random Llamas: each
intervention against a direct computation, the model restored after it, and the audit path that runs them."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from posbias.errors import InputError
from posbias.reading import attention_mitigations as am
from posbias.reading.prompts import qa_prompt

torch = pytest.importorskip("torch")

DOCUMENTS = [{"title": "Paris", "text": "The Eiffel tower stands in Paris, on the Champ de Mars."},
             {"title": "Rome", "text": "The Colosseum is an amphitheatre in the centre of Rome."},
             {"title": "Berlin", "text": "The Brandenburg Gate is a monument in Berlin."},
             {"title": "Madrid", "text": "The Prado museum holds paintings in Madrid."}]
QUESTION = "Where is the Eiffel tower?"


def llama(vocab_size: int, **special):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         intermediate_size=64, vocab_size=vocab_size, max_position_embeddings=1024, **special)
    return LlamaForCausalLM._from_config(config, attn_implementation="eager").eval()


@pytest.fixture(scope="module")
def tiny():
    return llama(100)


@pytest.fixture(scope="module")
def ids():
    return torch.randint(0, 100, (1, 48), generator=torch.Generator().manual_seed(1))


@pytest.fixture(scope="module")
def tokenizer():
    from transformers import AutoTokenizer

    from posbias.backbones import resolve

    return AutoTokenizer.from_pretrained(resolve("offline:all-MiniLM-L6-v2"))


@pytest.fixture(scope="module")
def reader(tokenizer):
    return llama(tokenizer.vocab_size)


def logits(model, ids):
    with torch.inference_mode():
        return model(ids).logits


def test_ms_poe_with_every_ratio_1_is_the_model_exactly_and_the_model_is_restored(tiny, ids):
    plain = logits(tiny, ids)
    unit = am.MsPoE(range(2), 1.0, 1.0, tiny.model.rotary_emb.inv_freq)
    with am.intervened(tiny, ms_poe=unit):
        assert torch.equal(logits(tiny, ids), plain)
    with am.intervened(tiny, ms_poe=am.MsPoE(range(1, 2), 1.2, 1.8, tiny.model.rotary_emb.inv_freq)) as model:
        assert not torch.allclose(logits(model, ids), plain)
    assert tiny.config._attn_implementation == "eager" and torch.equal(logits(tiny, ids), plain)


def test_ms_poe_rotates_each_head_as_at_its_position_over_its_ratio(tiny):
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

    rotary, n = tiny.model.rotary_emb, 40
    states = torch.randn(1, 4, n, 8, generator=torch.Generator().manual_seed(2))
    positions, ratios = torch.arange(n), torch.tensor([1.2, 1.4, 1.6, 1.8])
    cos, sin = rotary(states, positions[None])
    rotated, _ = apply_rotary_pos_emb(states, states, cos, sin)
    moved = am.rerotate(rotated, positions, ratios, rotary.inv_freq)
    for head, ratio in enumerate(ratios):
        cos, sin = rotary(states, (positions / ratio)[None])  # the rotation at position / ratio, computed directly
        direct, _ = apply_rotary_pos_emb(states, states, cos, sin)
        torch.testing.assert_close(moved[0, head], direct[0, head], atol=1e-5, rtol=1e-5)


def test_ms_poe_gives_the_farthest_reaching_heads_the_smallest_ratios(tiny, ids):
    poe = am.MsPoE(range(2), 1.2, 1.8, tiny.model.rotary_emb.inv_freq)
    with am.intervened(tiny, ms_poe=poe):
        logits(tiny, ids)
    assert sorted(poe.orders) == [0, 1]  # measured once per layer, at the prefill
    # each head's last query looks at one key: head 0 at the first (5 back), head 3 at 4 back, head 1 at 2 back,
    # head 2 at itself
    query, key = torch.zeros(1, 4, 6, 8), torch.zeros(1, 4, 6, 8)
    for head, looked_at in enumerate([0, 3, 5, 1]):
        query[0, head, -1, 0] = key[0, head, looked_at, 0] = 10.0
    ratios = am.MsPoE(range(1), 1.2, 1.8, tiny.model.rotary_emb.inv_freq).ratios(0, query, key, None, 1.0)
    torch.testing.assert_close(ratios, torch.tensor([1.2, 1.6, 1.8, 1.4]))


def softmax_rows(seed: int, queries: int = 5, keys: int = 30):
    scores = torch.randn(1, 4, queries, keys, generator=torch.Generator().manual_seed(seed))
    return torch.softmax(scores, dim=-1)


SPANS = [(3, 9), (9, 17), (18, 24)]


def test_calibration_with_a_zero_baseline_leaves_attention_as_it_was(tiny, ids):
    weights = softmax_rows(3)
    zero = am.Calibration(range(1), SPANS, {0: torch.zeros(4, 3)})
    torch.testing.assert_close(zero.apply(0, weights), weights)
    spans, plain = [(2, 10), (10, 20), (20, 30)], logits(tiny, ids)
    with am.intervened(tiny, calibration=am.Calibration(range(2), spans, {0: torch.zeros(4, 3),
                                                                           1: torch.zeros(4, 3)})):
        torch.testing.assert_close(logits(tiny, ids), plain)


def test_calibration_moves_each_document_s_mass_to_the_formula_s_target():
    weights = softmax_rows(4)
    baseline = torch.rand(4, 3, generator=torch.Generator().manual_seed(5)) / 30
    calibrated = am.Calibration(range(1), SPANS, {0: baseline}, scale=1.0).apply(0, weights)
    # the keys number 30 and the queries 5: queries 0..4 sit at positions 25..29, all after the last document
    for row in range(5):
        for head in range(4):
            before = weights[0, head, row]
            masses = torch.stack([before[s:e].sum() for s, e in SPANS])
            counts = torch.tensor([e - s for s, e in SPANS], dtype=torch.float32)
            c = (masses / counts - baseline[head]).clamp(min=0) * counts
            target = masses.sum() * c / c.sum()
            after = calibrated[0, head, row]
            torch.testing.assert_close(torch.stack([after[s:e].sum() for s, e in SPANS]), target)
            outside = torch.ones(30, dtype=torch.bool)
            for s, e in SPANS:
                outside[s:e] = False
            torch.testing.assert_close(after[outside], before[outside])  # the rest keep their weights
            assert after.sum() == pytest.approx(1.0, abs=1e-6)


def test_calibration_leaves_the_queries_inside_the_documents_alone():
    weights = torch.softmax(torch.randn(1, 4, 30, 30), dim=-1)
    calibrated = am.Calibration(range(1), SPANS, {0: torch.full((4, 3), 0.01)}).apply(0, weights)
    assert torch.equal(calibrated[:, :, :24], weights[:, :, :24]) and not torch.allclose(calibrated, weights)


def encoded(tokenizer, sent):
    return tokenizer(sent, return_tensors="pt")["input_ids"]


def test_document_spans_hold_each_document_s_tokens(tokenizer):
    sent = qa_prompt(QUESTION, DOCUMENTS)
    spans = am.document_spans(tokenizer, sent, DOCUMENTS, True)
    ids = encoded(tokenizer, sent)[0]
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))
    for number, (document, (start, end)) in enumerate(zip(DOCUMENTS, spans), start=1):
        alone = tokenizer(f"Document [{number}](Title: {document['title']}) {document['text']}",
                          add_special_tokens=False)["input_ids"]
        assert ids[start:end].tolist() == alone


def hand_sorted(model, tokenizer, sent, documents):
    """Attention sorting by hand: eager attention's own weights (output_attentions), the last token's mass on
    each document averaged over layers and heads, the documents sorted ascending."""
    spans = am.document_spans(tokenizer, sent, documents, True)
    with torch.inference_mode():
        attentions = model(encoded(tokenizer, sent), output_attentions=True).attentions
    received = [sum(float(layer[0, head, -1, s:e].sum()) for layer in attentions for head in range(4))
                / (4 * len(attentions)) for s, e in spans]
    return sorted(range(len(documents)), key=received.__getitem__)


@pytest.mark.parametrize("iterations", [1, 2])
def test_attention_sorting_puts_the_most_attended_document_last(reader, tokenizer, iterations):
    sent = qa_prompt(QUESTION, DOCUMENTS)
    expected, current = list(range(len(DOCUMENTS))), list(DOCUMENTS)
    for _ in range(iterations):
        step = hand_sorted(reader, tokenizer, am.reordered(sent, DOCUMENTS, expected), current)
        expected, current = [expected[j] for j in step], [current[j] for j in step]
    assert am.attention_order(reader, tokenizer, sent, DOCUMENTS, iterations, True) == expected
    assert expected != list(range(len(DOCUMENTS)))  # this random model does reorder them
    assert reader.config._attn_implementation == "eager"


def test_the_dummy_baseline_measures_each_slot_with_the_dummy_there(reader, tokenizer):
    sent = qa_prompt(QUESTION, DOCUMENTS)
    baseline = am.dummy_baseline(reader, tokenizer, sent, DOCUMENTS, True)
    assert sorted(baseline) == [0, 1] and baseline[0].shape == (4, len(DOCUMENTS))
    probing = [*DOCUMENTS[:2], am.dummy_document(DOCUMENTS[2]), *DOCUMENTS[3:]]
    probe = am.replaced(sent, DOCUMENTS, probing)
    start, end = am.document_spans(tokenizer, probe, probing, True)[2]
    with torch.inference_mode():
        attentions = reader(encoded(tokenizer, probe), output_attentions=True).attentions
    torch.testing.assert_close(baseline[1][:, 2], attentions[1][0, :, -1, start:end].sum(-1) / (end - start))
    assert len(am.dummy_document(DOCUMENTS[0])["text"].split()) == len(DOCUMENTS[0]["text"].split())


def test_the_context_manager_restores_the_model_when_the_forward_fails(tiny, ids):
    plain = logits(tiny, ids)
    with pytest.raises(RuntimeError), am.intervened(tiny):
        raise RuntimeError("a failure inside")
    assert tiny.config._attn_implementation == "eager" and torch.equal(logits(tiny, ids), plain)


def test_passes_and_layers():
    assert am.passes_per_prompt({"kind": "found_in_the_middle"}, 5) == 6
    assert am.passes_per_prompt({"kind": "attention_sorting", "iterations": 3}, 5) == 4
    assert am.passes_per_prompt({"kind": "ms_poe"}, 5) == 1
    assert am.parse_layers("half-", 30) == range(15, 30) and am.parse_layers("2-", 30) == range(2, 30)
    assert am.parse_layers("0-1", 30) == range(0, 2)
    with pytest.raises(InputError, match="layers 'x'"):
        am.parse_layers("x")
    with pytest.raises(InputError, match="the model has layers 0 to 1"):
        am.parse_layers("3-", 2)


@pytest.fixture(scope="module")
def reader_directory(tmp_path_factory, tokenizer):
    path = tmp_path_factory.mktemp("tiny-reader")
    llama(tokenizer.vocab_size, bos_token_id=tokenizer.cls_token_id, eos_token_id=tokenizer.sep_token_id,
          pad_token_id=tokenizer.pad_token_id).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)


def test_the_audit_runs_the_reader_battery_with_each_intervention_and_counts_its_passes(reader_directory, tmp_path):
    from posbias.audit.jobs import AuditJob
    from posbias.audit.steps import audit, write_reports

    from posbias.io import write_jsonl

    spec = f"reader:hf_causal:{reader_directory}?wrapper=none&device=cpu&batch_size=2"
    # a QA file of two questions (the embedded world's would retrieve them with an encoder first)
    qa = tmp_path / "qa.jsonl.gz"
    write_jsonl(qa, [{"question": f"Which city is number {i}?", "answers": [f"city {i}"],
                      "nq_annotated_gold": {"title": f"City {i}", "chunked_long_answer": f"It is city {i}."},
                      "ctxs": [{**document, "hasanswer": False} for document in DOCUMENTS]} for i in range(2)])
    settings = {"reader": {"n_questions": 2, "n_documents": 3, "max_new_tokens": 2, "source": {"qa": str(qa)}},
                "statistics": {"n_resamples": 20}}

    def run(name, **mitigated):
        (record,) = audit(AuditJob(spec, tmp_path / "a", ["reader"], settings=settings,
                                   cache_dir=str(tmp_path / "cache"), cache_mode="read_write", name=name,
                                   **mitigated))
        return record

    run("base")
    mitigations = {"fitm": {"kind": "found_in_the_middle", "layers": "1-"}, "poe": {"kind": "ms_poe", "layers": "1-"},
                   "sorted": {"kind": "attention_sorting", "iterations": 2}}
    records = {name: run(name, mitigation=mitigation, mitigates="base") for name, mitigation in mitigations.items()}
    assert records["fitm"]["extra"]["attention"] == {"kind": "found_in_the_middle", "layers": "1-", "scale": 1.0}
    entries = [json.loads(line) for path in (tmp_path / "cache").glob("*.jsonl") for line in path.open()]
    by_mitigation = {(entry.get("attention_mitigation") or {}).get("kind"): entry for entry in entries}
    assert len(entries) == 4 * 2 * 3 and set(by_mitigation) == {None, "found_in_the_middle", "ms_poe",
                                                                 "attention_sorting"}
    assert len({entry["key"] for entry in entries}) == len(entries)  # each mitigation answers under keys of its own
    write_reports(tmp_path / "a")
    table = pd.read_csv(tmp_path / "a" / "mitigations.csv").set_index("name")
    assert table["cost_multiplier"].to_dict() == {"fitm": 4.0, "poe": 1.0, "sorted": 3.0}
    # replayed from the cache: the same answers without running the model again
    again = audit(AuditJob(spec, tmp_path / "b", ["reader"], settings=settings, cache_dir=str(tmp_path / "cache"),
                           cache_mode="read_only", name="sorted", mitigation=mitigations["sorted"], mitigates="base"))
    assert again[0]["summary"] == records["sorted"]["summary"]


@pytest.mark.parametrize("mitigation, spec, message", [
    ({"kind": "ms_poe"}, "reader:mock:u_curve",
     r"ms_poe changes a model's attention, so it needs a reader on the hf_causal backend, not 'reader:mock:u_curve'"),
    ({"kind": "attention_sorting"}, "rankgpt:mock:identity", r"attention_sorting applies to models of capability"),
    ({"kind": "found_in_the_middle", "layers": "upper"}, "reader:hf_causal:x",
     r"found_in_the_middle.layers 'upper': expected A-B"),
    ({"kind": "ms_poe", "min_ratio": 2, "max_ratio": 1.5}, "reader:hf_causal:x", r"min_ratio 2.0 exceeds max_ratio"),
    ({"kind": "attention_sorting", "iterations": 0}, "reader:hf_causal:x", r"iterations must be a positive whole"),
    ({"kind": "found_in_the_middle", "scale": -1}, "reader:hf_causal:x", r"scale must be a number of at least 0"),
])
def test_attention_mitigation_mistakes_are_one_line(mitigation, spec, message):
    from posbias.audit.battery_settings import settings_with
    from posbias.audit.mitigations import apply
    from posbias.audit.spec import parse_model_spec

    with pytest.raises(InputError, match=message):
        apply(parse_model_spec(spec), settings_with(None), mitigation)


def test_the_command_line_form_of_an_attention_mitigation():
    from posbias.audit.mitigations import apply, checked, parse_mitigation
    from posbias.audit.battery_settings import settings_with
    from posbias.audit.spec import parse_model_spec

    ref = parse_model_spec("reader:hf_causal:x")
    mitigation = parse_mitigation("ms_poe?min_ratio=1.1&max_ratio=2&layers=0-")
    assert checked(mitigation, ref, "x") == {"kind": "ms_poe", "min_ratio": 1.1, "max_ratio": 2.0, "layers": "0-"}
    _, settings = apply(ref, settings_with(None), mitigation)
    assert settings["reader"]["attention"] == settings["reader_grid"]["attention"] == checked(mitigation, ref, "x")
