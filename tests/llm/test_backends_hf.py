"""Local Hugging Face backends on tiny random models with the offline MiniLM tokenizer."""

from __future__ import annotations

import contextlib
import json
import shutil

import numpy as np
import pytest

from posbias.errors import InputError
from posbias.llm.backends import make_backend
from posbias.llm.cache import ResponseCache
from posbias.llm.generate import LanguageModel
from posbias.llm.spec import ModelSpec
from posbias.llm.types import Decoding, Request

PROMPT = "Where is the Eiffel tower?"


@pytest.fixture(scope="module")
def tokenizer():
    from transformers import AutoTokenizer

    from posbias.backbones import resolve

    return AutoTokenizer.from_pretrained(resolve("offline:all-MiniLM-L6-v2"))


@pytest.fixture(scope="module")
def tiny_llama(tmp_path_factory, tokenizer) -> str:
    """A 2-layer, 16-wide random Llama with 64 positions, EOS = [SEP], saved with the MiniLM tokenizer."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    path = tmp_path_factory.mktemp("tiny-llama")
    config = LlamaConfig(vocab_size=tokenizer.vocab_size, hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=64,
                         bos_token_id=tokenizer.cls_token_id, eos_token_id=tokenizer.sep_token_id,
                         pad_token_id=tokenizer.pad_token_id)
    torch.manual_seed(0)
    LlamaForCausalLM(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)


def reference(path: str, tokenizer, prompt: str, max_new_tokens: int) -> tuple[list[int], str]:
    """Greedy generation straight with transformers: the generated ids and their decoding."""
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(path).eval()
    encoded = tokenizer(prompt, return_tensors="pt")
    with torch.inference_mode():
        output = model.generate(input_ids=encoded["input_ids"], attention_mask=encoded["attention_mask"],
                                do_sample=False, max_new_tokens=max_new_tokens,
                                pad_token_id=tokenizer.pad_token_id)
    ids = output[0, encoded["input_ids"].shape[1]:].tolist()
    return ids, tokenizer.decode(ids, skip_special_tokens=True)


def causal(path, **fields):
    return make_backend(ModelSpec(backend="hf_causal", model=path, **{"options": {"device": "cpu"}, **fields}))


def test_greedy_answer_is_the_generated_ids_decoded(tiny_llama, tokenizer):
    ids, expected = reference(tiny_llama, tokenizer, PROMPT, 6)
    assert tokenizer.sep_token_id not in ids  # this random model does not stop early: "length"
    backend = causal(tiny_llama)
    answer = backend.complete(backend.render(Request(prompt=PROMPT)), Decoding(max_new_tokens=6))
    assert answer.text == expected and answer.text.strip()
    assert answer.finish_reason == "length" and answer.completion_tokens == 6
    assert answer.prompt_tokens == len(tokenizer(PROMPT)["input_ids"])  # with [CLS] and [SEP]: wrapper none
    # deterministic: again, and in a fresh backend
    assert backend.complete(PROMPT, Decoding(max_new_tokens=6)) == answer
    assert causal(tiny_llama).complete(PROMPT, Decoding(max_new_tokens=6)) == answer


def test_eos_and_stop_strings_finish_with_stop(tiny_llama, tokenizer, tmp_path):
    ids, expected = reference(tiny_llama, tokenizer, PROMPT, 6)
    stopping = tmp_path / "stops"
    shutil.copytree(tiny_llama, stopping)
    generation = json.loads((stopping / "generation_config.json").read_text())
    (stopping / "generation_config.json").write_text(json.dumps({**generation, "eos_token_id": ids[2]}))
    answer = causal(str(stopping)).complete(PROMPT, Decoding(max_new_tokens=6))
    assert answer.finish_reason == "stop" and answer.completion_tokens == 3
    assert answer.text == tokenizer.decode(ids[:3], skip_special_tokens=True)
    word = expected.split()[1]
    cut = causal(tiny_llama).complete(PROMPT, Decoding(max_new_tokens=6, stop=(word,)))
    assert cut.text == expected[:expected.index(word)] and cut.finish_reason == "stop"


def test_a_batch_answers_as_each_prompt_alone(tiny_llama, tokenizer, tmp_path):
    """Prompts of different lengths, padded on the left, one of them ending early at its EOS: each answer, its
    finish reason and its token counts are those of the prompt answered alone."""
    prompts = [PROMPT, "What is the capital of a country far away from here today?", "Why?"]
    ids, _ = reference(tiny_llama, tokenizer, prompts[2], 6)
    stopping = tmp_path / "stops"
    shutil.copytree(tiny_llama, stopping)
    generation = json.loads((stopping / "generation_config.json").read_text())
    (stopping / "generation_config.json").write_text(json.dumps({**generation, "eos_token_id": ids[1]}))
    alone = causal(str(stopping))
    batched = causal(str(stopping), options={"device": "cpu", "batch_size": 3})
    decoding = Decoding(max_new_tokens=6)
    expected = [alone.complete(prompt, decoding) for prompt in prompts]
    assert expected[2].finish_reason == "stop" and expected[2].completion_tokens == 2
    calls = []
    generate = batched.model.generate
    batched.model.generate = lambda **kwargs: calls.append(kwargs["input_ids"].shape) or generate(**kwargs)
    assert batched.complete_batch(prompts, decoding, [None] * 3) == expected
    assert len(calls) == 1 and calls[0][0] == 3  # one generation of three padded rows
    # a row that meets a stop string ends there too, though the others go on (and its pad is an EOS id)
    word = expected[0].text.split()[1]
    stopping = Decoding(max_new_tokens=6, stop=(word,))
    alone_stopped = [alone.complete(prompt, stopping) for prompt in prompts]
    assert alone_stopped[0].finish_reason == "stop" and alone_stopped[0].completion_tokens < 6
    assert batched.complete_batch(prompts, stopping, [None] * 3) == alone_stopped
    # through the cache layer: answered in one call, the batch recorded with each answer
    model = LanguageModel(batched.spec, ResponseCache(tmp_path / "cache", "read_write"), backend=batched)
    done = model.generate([Request(prompt=prompt) for prompt in prompts], decoding, progress=False)
    assert [d.text for d in done] == [answer.text for answer in expected]
    entries = [json.loads(line) for line in next((tmp_path / "cache").glob("*.jsonl")).read_text().splitlines()]
    assert [entry["batch_size"] for entry in entries] == [3, 3, 3]
    with pytest.raises(InputError, match=r"options\.batch_size 0 is not auto or a whole number >= 1"):
        causal(tiny_llama, options={"batch_size": 0})


@pytest.fixture(scope="module")
def tiny_gpt2(tmp_path_factory, tokenizer) -> str:
    """A 2-layer random GPT-2: absolute positions, so a prompt padded on the left must keep its own."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    path = tmp_path_factory.mktemp("tiny-gpt2")
    config = GPT2Config(vocab_size=tokenizer.vocab_size, n_embd=16, n_layer=2, n_head=2, n_positions=64,
                        bos_token_id=tokenizer.cls_token_id, eos_token_id=tokenizer.sep_token_id)
    torch.manual_seed(0)
    GPT2LMHeadModel(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)


@pytest.mark.parametrize("architecture", ["tiny_llama", "tiny_gpt2"])
def test_batches_sorted_by_length_answer_as_one_at_a_time(architecture, request, tmp_path):
    """Greedy in fp32 on the CPU: prompts of many lengths through `LanguageModel`, in batches of 3 (longest first,
    padded on the left), answer exactly as one at a time, in the order asked."""
    path = request.getfixturevalue(architecture)
    prompts = ["Why?", PROMPT, "What is the capital of a country far away from here today?", "Who?",
               "Name a river.", "How long is a piece of string, and who measured it first?", "When was it built?"]
    decoding = Decoding(max_new_tokens=6)

    def answers(batch_size: int, shapes: list):
        backend = causal(path, options={"device": "cpu", "batch_size": batch_size})
        generate = backend.model.generate
        backend.model.generate = lambda **kwargs: shapes.append(tuple(kwargs["input_ids"].shape)) or generate(**kwargs)
        model = LanguageModel(backend.spec, ResponseCache(tmp_path / str(batch_size), "off"), backend=backend)
        return [(c.text, c.finish_reason, c.prompt_tokens, c.completion_tokens)
                for c in model.generate([Request(prompt=p) for p in prompts], decoding, progress=False)]

    alone_shapes, batched_shapes = [], []
    alone = answers(1, alone_shapes)
    assert answers(3, batched_shapes) == alone
    assert [rows for rows, _ in alone_shapes] == [1] * 7 and [rows for rows, _ in batched_shapes] == [3, 3, 1]
    widths = [width for _, width in batched_shapes]
    assert widths == sorted(widths, reverse=True)  # longest first: rows of like length share a batch
    assert widths[0] == max(width for _, width in alone_shapes)


def test_dtype_device_and_batch_size_resolve(tiny_llama, monkeypatch):
    """auto on a CPU is float32 and one prompt at a time, with the cache key of an explicit float32 (answers
    recorded before auto replay); on a GPU (faked here) bfloat16 where it has it, float32 where not, and batches
    of 8. bfloat16 runs on a CPU; float16 is refused there at loading, though its answers still replay."""
    import torch

    auto = causal(tiny_llama)
    assert auto.device == torch.device("cpu") and (auto.dtype, auto.batch_size) == ("float32", 1)
    assert auto.identity() == causal(tiny_llama, options={"device": "cpu", "dtype": "float32"}).identity()
    assert causal(tiny_llama, options={"batch_size": "auto"}).batch_size == 1

    for bf16, dtype in ((True, "bfloat16"), (False, "float32")):
        on_gpu = causal(tiny_llama, options={"device": "auto"})
        on_gpu.device = torch.device("cuda")  # a cached property: the value torch would give with a GPU
        # what torch would say of that GPU: native bf16 (Ampere on) or not (emulated bf16 counts as none)
        monkeypatch.setattr(torch.cuda, "device", lambda device: contextlib.nullcontext())
        monkeypatch.setattr(torch.cuda, "is_bf16_supported",
                            lambda including_emulation=True: bf16 or including_emulation)
        assert (on_gpu.dtype, on_gpu.batch_size, on_gpu.identity()["dtype"]) == (dtype, 8, dtype)
    seq2seq = make_backend(ModelSpec(backend="hf_seq2seq", model=tiny_llama))
    seq2seq.device = torch.device("cuda")
    assert seq2seq.batch_size == 1  # it answers one prompt at a time

    bf16 = causal(tiny_llama, options={"device": "cpu", "dtype": "bfloat16"})
    answer = bf16.complete(PROMPT, Decoding(max_new_tokens=3))
    assert bf16.model.dtype == torch.bfloat16 and answer.completion_tokens == 3
    fp16 = causal(tiny_llama, options={"device": "cpu", "dtype": "float16"})
    assert fp16.identity()["dtype"] == "float16"
    with pytest.raises(InputError, match="options.dtype float16 needs a GPU"):
        fp16.prepare()


def test_a_job_given_a_gpu_that_torch_cannot_see_stops_before_loading(tiny_llama, monkeypatch):
    import torch

    monkeypatch.setenv("SLURM_GPUS_ON_NODE", "1")
    monkeypatch.delenv("POSBIAS_CPU_DESPITE_ALLOTTED_GPU", raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(InputError, match="device 'auto': the scheduler gave this job a GPU"):
        causal(tiny_llama, options={}).identity()


def test_context_limits_are_refused_before_loading(tiny_llama, monkeypatch):
    import transformers

    def fail(*args, **kwargs):
        raise AssertionError("the model was loaded")

    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", fail)
    long_prompt = " ".join(["word"] * 58)  # 60 tokens with [CLS] and [SEP]
    with pytest.raises(InputError, match="tiny-llama.*60 tokens needs 70 positions.*context of 64"):
        causal(tiny_llama).check(long_prompt, Decoding(max_new_tokens=10))
    with pytest.raises(InputError, match="context of 12"):
        causal(tiny_llama, context=12).check(PROMPT, Decoding(max_new_tokens=10))
    causal(tiny_llama).check(long_prompt, Decoding(max_new_tokens=4))  # 64 positions: fits
    spec = ModelSpec(backend="hf_causal", model=tiny_llama, context=12)
    model = LanguageModel(spec, ResponseCache(tiny_llama, "off"))
    with pytest.raises(InputError, match="context of 12"):
        model.generate([Request(prompt=PROMPT)], Decoding(max_new_tokens=10), progress=False)


def test_sampling_is_refused(tiny_llama):
    with pytest.raises(InputError, match="greedily.*temperature 0.7"):
        causal(tiny_llama).check(PROMPT, Decoding(temperature=0.7))
    with pytest.raises(InputError, match="top_p 0.9"):
        causal(tiny_llama).complete(PROMPT, Decoding(top_p=0.9))


def test_replay_never_loads_the_model(tiny_llama, tmp_path, monkeypatch):
    import transformers

    spec = ModelSpec(backend="hf_causal", model=tiny_llama, options={"device": "cpu"})
    requests = [Request(prompt=PROMPT), Request(prompt="Who painted the Mona Lisa?")]
    made = LanguageModel(spec, ResponseCache(tmp_path)).generate(requests, Decoding(max_new_tokens=4), progress=False)
    assert not any(c.cache_hit for c in made) and all(c.latency_s > 0 for c in made)

    def fail(*args, **kwargs):
        raise AssertionError("the model was loaded")

    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", fail)
    replay = LanguageModel(spec, ResponseCache(tmp_path, "read_only")).generate(requests, Decoding(max_new_tokens=4),
                                                                                progress=False)
    assert [c.text for c in replay] == [c.text for c in made] and all(c.cache_hit for c in replay)
    assert [c.latency_s for c in replay] == [c.latency_s for c in made]
    with pytest.raises(AssertionError, match="was loaded"):  # the guard works: a miss would load it
        LanguageModel(spec, ResponseCache(tmp_path)).generate([Request(prompt="new")], Decoding(max_new_tokens=4),
                                                              progress=False)


def test_revision_is_the_spec_or_a_fingerprint(tiny_llama, tmp_path):
    identity = causal(tiny_llama).identity()
    assert identity["revision"].startswith("sha256:") and identity["dtype"] == "float32"
    assert causal(tiny_llama, revision="v1").identity()["revision"] == "v1"
    changed = tmp_path / "changed"
    shutil.copytree(tiny_llama, changed)
    config = json.loads((changed / "config.json").read_text())
    (changed / "config.json").write_text(json.dumps({**config, "rms_norm_eps": 1e-5}))
    assert causal(str(changed)).identity()["revision"] != identity["revision"]
    assert causal(tiny_llama, options={"dtype": "bfloat16"}).identity()["dtype"] == "bfloat16"


def test_options_and_wrappers_are_checked(tiny_llama):
    with pytest.raises(InputError, match="dtype 'float8'"):
        causal(tiny_llama, options={"dtype": "float8"})
    with pytest.raises(InputError, match="no options \\['trust_code'\\]"):
        causal(tiny_llama, options={"trust_code": True})
    with pytest.raises(InputError, match="not 'messages'"):
        causal(tiny_llama, wrapper="messages")
    with pytest.raises(InputError, match="no chat template"):
        causal(tiny_llama, wrapper="chat_template").render(Request(prompt=PROMPT))


def test_chat_template_prompts_get_no_second_set_of_special_tokens(tiny_llama, tokenizer, tmp_path):
    templated = tmp_path / "templated"
    shutil.copytree(tiny_llama, templated)
    config = json.loads((templated / "tokenizer_config.json").read_text())
    config["chat_template"] = "[CLS] {{ messages[0]['content'] }} [SEP]"
    (templated / "tokenizer_config.json").write_text(json.dumps(config))
    backend = causal(str(templated), wrapper="chat_template")
    sent = backend.render(Request(prompt=PROMPT))
    assert sent == f"[CLS] {PROMPT} [SEP]"
    answer = backend.complete(sent, Decoding(max_new_tokens=2))
    assert answer.prompt_tokens == len(tokenizer(PROMPT)["input_ids"])  # not 2 more


@pytest.fixture(scope="module")
def tiny_t5(tmp_path_factory, tokenizer) -> str:
    import torch
    from transformers import T5Config, T5ForConditionalGeneration

    path = tmp_path_factory.mktemp("tiny-t5")
    config = T5Config(vocab_size=tokenizer.vocab_size, d_model=16, d_kv=8, d_ff=32, num_layers=1,
                      num_decoder_layers=1, num_heads=2, pad_token_id=tokenizer.pad_token_id,
                      decoder_start_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.sep_token_id)
    torch.manual_seed(0)
    T5ForConditionalGeneration(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)


def test_seq2seq_never_truncates_and_decodes_the_output(tiny_t5, tokenizer):
    import torch
    from transformers import AutoModelForSeq2SeqLM

    prompt = " ".join(["passage"] * 600)  # longer than the tokenizer's 512: nothing is cut
    backend = make_backend(ModelSpec(backend="hf_seq2seq", model=tiny_t5, options={"device": "cpu"}))
    answer = backend.complete(backend.render(Request(prompt=prompt)), Decoding(max_new_tokens=5))
    assert answer.prompt_tokens == 602
    model = AutoModelForSeq2SeqLM.from_pretrained(tiny_t5).eval()
    encoded = tokenizer(prompt, return_tensors="pt")
    with torch.inference_mode():
        output = model.generate(input_ids=encoded["input_ids"], attention_mask=encoded["attention_mask"],
                                do_sample=False, max_new_tokens=5)
    assert answer.text == tokenizer.decode(output[0, 1:], skip_special_tokens=True)
    assert answer.completion_tokens == output.shape[1] - 1
    with pytest.raises(InputError, match="602 tokens.*context of 100"):
        make_backend(ModelSpec(backend="hf_seq2seq", model=tiny_t5, context=100)).check(prompt, Decoding())


def test_next_token_log_probabilities_equal_a_forward_pass_alone(tiny_llama, tokenizer):
    """What a pointwise ranker reads (posbias.scoring.llm_ranker): each prompt's next-token log-probabilities of the
    words' first tokens, in batches padded on the left, equal to one prompt's forward pass by hand."""
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(tiny_llama).eval()
    prompts = [PROMPT, "a much longer prompt that needs padding when it shares a batch with a short one", "yes"]
    words = ["yes", "no", "maybe"]
    first = [tokenizer(word, add_special_tokens=False)["input_ids"][0] for word in words]
    expected = []
    for prompt in prompts:
        with torch.no_grad():
            logits = model(**tokenizer(prompt, return_tensors="pt")).logits[0, -1]
        expected.append(torch.log_softmax(logits.double(), dim=-1)[first].numpy())
    for batch_size in (1, 3):
        backend = causal(tiny_llama, options={"device": "cpu", "batch_size": batch_size})
        found = backend.next_token_logprobs(prompts, words)
        assert found.shape == (3, 3)
        np.testing.assert_allclose(found, np.array(expected), atol=1e-5)


def test_next_token_log_probabilities_compute_the_output_layer_at_the_last_position_only(tiny_llama):
    """A pointwise ranker reads one position: the forward is asked for that position's logits alone (the output
    layer over every prompt token would cost a small model about a quarter more)."""
    backend = causal(tiny_llama, options={"device": "cpu", "batch_size": 2})
    shapes = []
    backend.model.get_output_embeddings().register_forward_hook(
        lambda module, inputs, output: shapes.append(tuple(output.shape)))
    backend.next_token_logprobs([PROMPT, "a longer prompt padded beside the first"], ["yes"])
    assert len(shapes) == 1 and shapes[0][:2] == (2, 1)


def test_next_token_log_probabilities_of_a_model_with_absolute_positions(tokenizer, tmp_path):
    """GPT-2 reads absolute positions: a prompt padded on the left keeps its own (counted from its first token)."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(vocab_size=tokenizer.vocab_size, n_embd=16, n_layer=2, n_head=2, n_positions=64,
                        bos_token_id=tokenizer.cls_token_id, eos_token_id=tokenizer.sep_token_id)
    torch.manual_seed(0)
    GPT2LMHeadModel(config).save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    prompts = ["short", "a longer prompt padded beside the short one"]
    alone = np.concatenate([causal(str(tmp_path)).next_token_logprobs([p], ["yes"]) for p in prompts])
    together = causal(str(tmp_path), options={"device": "cpu", "batch_size": 2}).next_token_logprobs(prompts, ["yes"])
    np.testing.assert_allclose(together, alone, atol=1e-5)
