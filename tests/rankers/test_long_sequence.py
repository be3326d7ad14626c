"""LongP on long-context and decoder backbones: Longformer's global attention where the study puts it, a
Llama-shaped decoder with a tokenizer that has no [CLS], [SEP] or pad token, and token types only where the
tokenizer emits them. The BERT, ELECTRA and RoBERTa cases are in test_every_ranker.py."""

from __future__ import annotations

import pytest
import torch

from posbias.errors import InputError
from posbias.rankers.checkpoint import load_checkpoint, save_checkpoint
from posbias.rankers.pair_template import PairTemplate
from posbias.rankers.registry import build_ranker

WORDS = ["hello", "world", "capital", "of", "zorvia", "is", "mendal", "filler", "words", "here"]


@pytest.fixture(scope="module")
def llama_tokenizer(tmp_path_factory):
    """A word-level tokenizer shaped like Llama's: `<s> q <s> d` for a pair, no pad, [CLS] or [SEP] token,
    no token types."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2, **{word: 3 + i for i, word in enumerate(WORDS)}}
    core = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    core.post_processor = processors.TemplateProcessing(single="<s> $A", pair="<s> $A <s> $B",
                                                        special_tokens=[("<s>", 1)])
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, bos_token="<s>", eos_token="</s>", unk_token="<unk>",
                                        model_input_names=["input_ids", "attention_mask"])
    path = tmp_path_factory.mktemp("llama-tokenizer")
    tokenizer.save_pretrained(path)
    return tokenizer


@pytest.fixture(scope="module")
def tiny_llama(tmp_path_factory, llama_tokenizer) -> str:
    from transformers import LlamaConfig, LlamaModel

    torch.manual_seed(0)
    model = LlamaModel(LlamaConfig(vocab_size=len(llama_tokenizer), hidden_size=32, intermediate_size=64,
                                   num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2,
                                   max_position_embeddings=128, bos_token_id=1, eos_token_id=2))
    path = tmp_path_factory.mktemp("tiny-llama")
    model.save_pretrained(path)
    llama_tokenizer.save_pretrained(path)
    return str(path)


@pytest.fixture(scope="module")
def tiny_longformer(tmp_path_factory, tokenizer) -> str:
    from transformers import LongformerConfig, LongformerModel

    torch.manual_seed(0)
    model = LongformerModel(LongformerConfig(
        vocab_size=tokenizer.vocab_size, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=2, attention_window=[4, 4], pad_token_id=tokenizer.pad_token_id, type_vocab_size=1,
        max_position_embeddings=128 + tokenizer.pad_token_id + 1))
    path = tmp_path_factory.mktemp("tiny-longformer")
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)


def geometry(doc_tokens: int = 24, **extra) -> dict:
    return dict(max_query_tokens=6, chunk_tokens=doc_tokens, stride=doc_tokens, max_doc_tokens=doc_tokens, **extra)


def ids(tokenizer, text):
    return tokenizer(text, add_special_tokens=False)["input_ids"]


def test_the_pair_template_is_read_off_the_tokenizer(tokenizer, llama_tokenizer):
    bert = PairTemplate.of(tokenizer)
    cls, sep = tokenizer.cls_token_id, tokenizer.sep_token_id
    assert (bert.prefix, bert.middle, bert.suffix) == ((cls,), (sep,), (sep,))
    assert bert.types == ((0,), 0, (0,), 1, (1,)) and bert.pad_id == tokenizer.pad_token_id
    llama = PairTemplate.of(llama_tokenizer)
    assert (llama.prefix, llama.middle, llama.suffix) == ((1,), (1,), ())
    assert llama.types is None  # the tokenizer emits no token types
    assert llama.pad_id == llama_tokenizer.eos_token_id  # no pad token: padded with </s>, masked


def test_a_template_with_nothing_between_the_texts_gets_the_end_of_sequence_token_there():
    """SmolLM2's tokenizer (GPT-2-style BPE) joins a pair by plain concatenation."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(models.WordLevel({"<unk>": 0, "<|im_end|>": 1, "hello": 2, "world": 3}, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    plain = PreTrainedTokenizerFast(tokenizer_object=core, eos_token="<|im_end|>", pad_token="<|im_end|>",
                                    unk_token="<unk>", model_input_names=["input_ids", "attention_mask"])
    assert plain("hello", "world")["input_ids"] == [2, 3]
    template = PairTemplate.of(plain)
    assert (template.prefix, template.middle, template.suffix) == ((), (1,), ())
    # a tokenizer that emits token types gets the separator typed as the query, one type per token
    typed = PreTrainedTokenizerFast(tokenizer_object=core, eos_token="<|im_end|>", pad_token="<|im_end|>",
                                    unk_token="<unk>", model_input_names=["input_ids", "token_type_ids",
                                                                          "attention_mask"])
    types = PairTemplate.of(typed).types
    assert types[2] == (types[1],) and len(types[2]) == len(PairTemplate.of(typed).middle)


def test_longformer_gets_global_attention_on_cls_the_real_query_and_the_first_separator(tiny_longformer, tokenizer):
    ranker = build_ranker("longp", {"backbone": tiny_longformer, **geometry(pad_query=True)})
    featurizer = ranker.featurizer(tokenizer)
    query, doc = ids(tokenizer, "capital of zorvia"), ids(tokenizer, "the capital of zorvia is mendal")
    batch = featurizer.batch([(query, doc)])
    row = batch.input_ids[0, 0].tolist()
    # [CLS] q1 q2 q3 <3 masked pad slots> [SEP] d... [SEP]
    expected = [1] * (1 + len(query)) + [0] * (6 - len(query)) + [1] + [0] * (len(doc) + 1)
    assert batch.global_attention_mask[0, 0].tolist() == expected
    assert row[0] == tokenizer.cls_token_id and row[1 + 6] == tokenizer.sep_token_id
    assert batch.attention_mask[0, 0, 1 + len(query):7].tolist() == [0] * (6 - len(query))

    # the FirstP twin (the same model capped at fewer document tokens) gets the same global attention
    twin = build_ranker("longp", {"backbone": tiny_longformer, **geometry(4, pad_query=True)})
    assert twin.featurizer(tokenizer).batch([(query, doc)]).global_attention_mask[0, 0, :8].tolist() == expected[:8]

    ranker.eval()
    long = ids(tokenizer, " ".join(["filler words here"] * 6))
    with torch.no_grad():
        batched = ranker(featurizer.batch([(query, doc), (query, long)]))
        alone = ranker(featurizer.batch([(query, doc)]))
    assert torch.isfinite(batched).all() and torch.allclose(alone, batched[:1], atol=1e-5)


def test_a_decoder_ranker_needs_no_cls_or_sep(tiny_llama, llama_tokenizer, tmp_path):
    assert llama_tokenizer.cls_token_id is None and llama_tokenizer.sep_token_id is None
    ranker = build_ranker("longp", {"backbone": tiny_llama, "pooling": "mean", **geometry()})
    assert not ranker.global_attention
    featurizer = ranker.featurizer(llama_tokenizer)
    query = ids(llama_tokenizer, "capital of zorvia")
    docs = [ids(llama_tokenizer, "the capital of zorvia is mendal"),
            ids(llama_tokenizer, " ".join(["filler words here"] * 6))]
    batch = featurizer.batch([(query, doc) for doc in docs])
    first = batch.input_ids[0, 0, :batch.attention_mask[0, 0].sum()].tolist()
    assert first == [1, *query, 1, *docs[0]]  # <s> q <s> d, as the tokenizer joins a pair
    assert batch.input_ids[0, 0, -1] == llama_tokenizer.eos_token_id  # padding
    assert not batch.token_type_ids.any()  # the tokenizer emits none

    torch.manual_seed(0)
    ranker.train()
    scores = ranker(batch)
    (scores[0] - scores[1]).backward()
    assert all(p.grad is not None for p in ranker.head.parameters())
    ranker.eval()
    with torch.no_grad():
        scores = ranker(batch)
        alone = torch.cat([ranker(featurizer.batch([(query, doc)])) for doc in docs])
    assert torch.allclose(alone, scores, atol=1e-5)  # right padding and a longer neighbour change nothing
    save_checkpoint(ranker, llama_tokenizer, str(tmp_path / "ckpt"))
    loaded, loaded_tokenizer = load_checkpoint(str(tmp_path / "ckpt"))
    with torch.no_grad():
        assert torch.equal(loaded(loaded.featurizer(loaded_tokenizer).batch([(query, doc) for doc in docs])), scores)


def test_longp_reads_one_sequence(tiny_backbone):
    with pytest.raises(InputError, match="longp reads the document in one sequence"):
        build_ranker("longp", dict(backbone=tiny_backbone, max_query_tokens=6, chunk_tokens=8, stride=8,
                                   max_doc_tokens=24))


def test_on_a_bert_tokenizer_the_firstp_twin_lays_out_firstps_inputs(tiny_backbone, tokenizer):
    """Why the embedded default measures its MiniLM LongP against `firstp`: at FirstP's document budget the
    one-sequence featurizer builds exactly the chunked FirstP's inputs."""
    args = dict(backbone=tiny_backbone, max_query_tokens=6, chunk_tokens=8, stride=8, max_doc_tokens=8)
    pairs = [(ids(tokenizer, "capital of zorvia"), ids(tokenizer, "the capital of zorvia is mendal " * 3)),
             (ids(tokenizer, "zorvia"), ids(tokenizer, "mendal"))]
    twin = build_ranker("longp", args).featurizer(tokenizer).batch(pairs)
    firstp = build_ranker("firstp", args).featurizer(tokenizer).batch(pairs)
    for field in ("input_ids", "attention_mask", "token_type_ids", "chunk_mask", "query_mask", "doc_positions",
                  "doc_mask"):
        assert torch.equal(getattr(twin, field), getattr(firstp, field)), field


def test_bf16_weights_train_and_round_trip_with_an_fp32_head(tiny_llama, llama_tokenizer, tmp_path):
    """`backbone_dtype: bfloat16` halves a large decoder's weights (and its optimizer states); the head stays fp32."""
    torch.manual_seed(0)
    ranker = build_ranker("longp", {"backbone": tiny_llama, **geometry(), "pooling": "mean",
                                    "backbone_dtype": "bfloat16"})
    assert {p.dtype for p in ranker.encoder.backbone.parameters()} == {torch.bfloat16}
    assert {p.dtype for p in ranker.head.parameters()} == {torch.float32}
    featurizer = ranker.featurizer(llama_tokenizer)
    pairs = [(ids(llama_tokenizer, "capital of zorvia"), ids(llama_tokenizer, doc))
             for doc in ("zorvia capital is mendal", "filler words here filler words")]
    before = ranker.encoder.backbone.norm.weight.detach().clone()
    optimizer = torch.optim.AdamW(ranker.parameters(), lr=1e-2)
    for _ in range(2):
        scores = ranker(featurizer.batch(pairs))
        assert scores.dtype == torch.float32
        loss = torch.relu(1 - scores[0] + scores[1])
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    assert not torch.equal(ranker.encoder.backbone.norm.weight, before)
    ranker.eval()
    with torch.no_grad():
        scores = ranker(featurizer.batch(pairs))
    save_checkpoint(ranker, llama_tokenizer, str(tmp_path / "bf16"))
    loaded, _ = load_checkpoint(str(tmp_path / "bf16"))
    assert {p.dtype for p in loaded.encoder.backbone.parameters()} == {torch.bfloat16}
    with torch.no_grad():
        assert torch.equal(loaded(loaded.featurizer(llama_tokenizer).batch(pairs)), scores)


@pytest.fixture(scope="module")
def tiny_bigbird(tmp_path_factory, tokenizer) -> str:
    """Big-Bird with block-sparse attention: blocks of 2 tokens and one random block, so inputs longer than
    (5 + 2 * 1) * 2 = 14 tokens run sparse (shorter ones fall back to full attention, as Hugging Face does)."""
    from transformers import BigBirdConfig, BigBirdModel

    torch.manual_seed(0)
    model = BigBirdModel(BigBirdConfig(
        vocab_size=tokenizer.vocab_size, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=2, attention_type="block_sparse", block_size=2, num_random_blocks=1,
        max_position_embeddings=128))
    path = tmp_path_factory.mktemp("tiny-bigbird")
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)


def test_bigbird_longp_trains_scores_and_round_trips_in_block_sparse_attention(tiny_bigbird, tokenizer, tmp_path):
    torch.manual_seed(0)
    ranker = build_ranker("longp", {"backbone": tiny_bigbird, **geometry()})
    assert ranker.encoder.backbone.config.attention_type == "block_sparse"
    featurizer = ranker.featurizer(tokenizer)
    filler = " ".join(["filler words here"] * 8)
    pairs = [(ids(tokenizer, "capital of zorvia"), ids(tokenizer, f"{filler} the capital of zorvia is mendal")),
             (ids(tokenizer, "capital of zorvia"), ids(tokenizer, f"{filler} {filler}"))]
    batch = featurizer.batch(pairs)
    assert batch.input_ids.shape[-1] > 14  # long enough for block-sparse attention
    optimizer = torch.optim.AdamW(ranker.parameters(), lr=1e-2)
    before = ranker.head.score.weight.detach().clone()
    for _ in range(2):
        scores = ranker(batch)
        loss = torch.relu(1 - scores[0] + scores[1])
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    assert torch.isfinite(loss) and not torch.equal(ranker.head.score.weight, before)
    ranker.eval()
    with torch.no_grad():
        scores = ranker(batch)
        assert torch.equal(ranker(batch), scores)  # deterministic in evaluation
    save_checkpoint(ranker, tokenizer, str(tmp_path / "bigbird"))
    loaded, _ = load_checkpoint(str(tmp_path / "bigbird"))
    with torch.no_grad():
        assert torch.equal(loaded(loaded.featurizer(tokenizer).batch(pairs)), scores)
