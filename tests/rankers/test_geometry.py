import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from posbias.rankers import check_geometry, geometry_limit
from posbias.rankers.geometry import ChunkGeometry, plain_config, position_limit
from posbias.rankers.registry import build_ranker


def test_windows_disjoint_and_sliding():
    disjoint = ChunkGeometry(max_query_tokens=4, chunk_tokens=10, stride=10, max_doc_tokens=30)
    assert disjoint.max_chunks == 3
    assert disjoint.windows(5) == [(0, 5)]
    assert disjoint.windows(25) == [(0, 10), (10, 20), (20, 25)]
    assert disjoint.windows(100) == [(0, 10), (10, 20), (20, 30)]  # cut to max_doc_tokens
    sliding = ChunkGeometry(max_query_tokens=4, chunk_tokens=10, stride=5, max_doc_tokens=30)
    assert sliding.windows(12) == [(0, 10), (5, 12)]
    assert sliding.windows(30) == [(0, 10), (5, 15), (10, 20), (15, 25), (20, 30)]
    assert sliding.max_chunks == len(sliding.windows(30))


def test_geometry_rejects_gaps_and_nonsense():
    with pytest.raises(ValueError, match="stride"):
        ChunkGeometry(4, 10, 11, 30)
    with pytest.raises(ValueError, match="max_doc_tokens"):
        ChunkGeometry(4, 10, 10, 5)
    with pytest.raises(ValueError, match="positive"):
        ChunkGeometry(0, 10, 10, 30)


@pytest.fixture(scope="module")
def roberta_config_dir(tmp_path_factory):
    """Only a config.json, as RoBERTa base has it: 514 position embeddings, padding_idx 1."""
    from transformers import RobertaConfig

    path = tmp_path_factory.mktemp("roberta-config")
    RobertaConfig(max_position_embeddings=514, pad_token_id=1).save_pretrained(path)
    return str(path)


def test_the_limit_is_read_from_the_config_alone(tiny_backbone, roberta_config_dir):
    assert geometry_limit(tiny_backbone) == 128
    assert geometry_limit("offline:all-MiniLM-L6-v2") == 512
    assert geometry_limit(roberta_config_dir) == 512  # 514 minus RoBERTa's padding offset of 2
    assert geometry_limit("no-such-org/not-in-any-local-cache") is None  # unreadable offline: unchecked


def test_the_plain_json_reading_agrees_with_transformers_config(tiny_backbones, roberta_config_dir, tmp_path):
    from transformers import AutoConfig

    for directory in (tiny_backbones, roberta_config_dir):
        plain = plain_config(Path(directory) / "config.json")
        assert plain is not None and position_limit(plain) == position_limit(AutoConfig.from_pretrained(directory))
    # RoBERTa's class default pad_token_id (1) is not in the file: transformers reads it, not the JSON route
    config = json.loads((Path(roberta_config_dir) / "config.json").read_text())
    del config["pad_token_id"]
    (tmp_path / "config.json").write_text(json.dumps(config))
    assert plain_config(tmp_path / "config.json") is None and geometry_limit(str(tmp_path)) == 512


def test_a_hub_name_is_read_from_the_local_hugging_face_cache(roberta_config_dir, tmp_path, monkeypatch):
    import huggingface_hub.constants

    snapshot = tmp_path / "models--some-org--some-roberta" / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text((Path(roberta_config_dir) / "config.json").read_text())
    (tmp_path / "models--some-org--some-roberta" / "refs").mkdir()
    (tmp_path / "models--some-org--some-roberta" / "refs" / "main").write_text("abc123")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path))
    assert geometry_limit("some-org/some-roberta") == 512
    assert geometry_limit("some-org/not-cached") is None


def test_models_without_a_position_table_have_no_limit():
    assert position_limit(SimpleNamespace(model_type="bert", position_embedding_type="alibi",
                                          max_position_embeddings=8192)) is None
    assert position_limit(SimpleNamespace(model_type="bert")) is None
    assert position_limit(SimpleNamespace(model_type="electra", max_position_embeddings=512, pad_token_id=0)) == 512


def args(backbone, query, chunk, **more):
    return dict(backbone=backbone, max_query_tokens=query, chunk_tokens=chunk, stride=chunk, max_doc_tokens=chunk,
                **more)


def test_a_geometry_longer_than_the_position_embeddings_is_refused_by_name(tiny_backbone, roberta_config_dir):
    check_geometry("firstp", args(tiny_backbone, 25, 100))  # 25 + 100 + 3 = 128: exactly fits
    with pytest.raises(ValueError, match=r"chunk_tokens \(101\) \+ max_query_tokens \(25\) \+ 3 special tokens = "
                                         r"129 positions, but backbone .* has 128 \(max_position_embeddings\)"):
        check_geometry("maxp", args(tiny_backbone, 25, 101))
    check_geometry("firstp", args(roberta_config_dir, 32, 477))  # the study's FirstP: 32 + 477 + 3 = 512
    with pytest.raises(ValueError, match="513 positions, but backbone .* has 512"):
        check_geometry("firstp", args(roberta_config_dir, 33, 477))
    check_geometry("longp", args("no-such-org/not-in-any-local-cache", 64, 4096))  # cannot be read here: not checked


@pytest.fixture(scope="module")
def roberta_dir(tmp_path_factory, roberta_config_dir):
    """RoBERTa's config with a word-level tokenizer in RoBERTa's templates: `<s> a </s></s> b </s>` for a pair
    (4 special tokens) and `<s> a </s>` for one text."""
    import shutil

    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(models.WordLevel({"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3, "hello": 4, "world": 5},
                                      unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    core.post_processor = processors.TemplateProcessing(single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>",
                                                        special_tokens=[("<s>", 0), ("</s>", 2)])
    path = tmp_path_factory.mktemp("roberta")
    shutil.copy(f"{roberta_config_dir}/config.json", path)
    PreTrainedTokenizerFast(tokenizer_object=core, bos_token="<s>", eos_token="</s>", pad_token="<pad>",
                            unk_token="<unk>", model_input_names=["input_ids", "attention_mask"]).save_pretrained(path)
    return str(path)


def test_one_sequence_rankers_count_their_tokenizers_special_tokens(roberta_dir):
    # the chunked layout has 3 special tokens whatever the tokenizer; longp reads RoBERTa's own pair template
    check_geometry("firstp", args(roberta_dir, 32, 477))
    check_geometry("longp", args(roberta_dir, 31, 477))  # 31 + 477 + 4 = 512
    with pytest.raises(ValueError, match=r"chunk_tokens \(477\) \+ max_query_tokens \(32\) \+ 4 special tokens = 513"):
        check_geometry("longp", args(roberta_dir, 32, 477))
    # a bi-encoder encodes query and document apart: the longer of the two, in `<s> text </s>`
    check_geometry("biencoder", args(roberta_dir, 32, 510))
    with pytest.raises(ValueError, match=r"max_doc_tokens \(511\) \+ 0 prefix tokens, \+ 2 special tokens = 513"):
        check_geometry("biencoder", args(roberta_dir, 32, 511))


def test_the_ranker_constructor_checks_the_loaded_backbone(tiny_backbone):
    build_ranker("firstp", args(tiny_backbone, 25, 100))
    with pytest.raises(ValueError, match="129 positions, but backbone .* has 128"):
        build_ranker("firstp", args(tiny_backbone, 26, 100, pad_query=True))


def test_a_geometry_far_below_the_limit_is_passed_without_loading_the_tokenizer(roberta_dir, monkeypatch):
    from posbias.rankers import geometry

    def no_tokenizer(*args):
        raise AssertionError("the tokenizer was loaded")

    monkeypatch.setattr(geometry, "local_tokenizer", no_tokenizer)
    check_geometry("longp", args(roberta_dir, 32, 400))  # 435 + up to 16 template tokens: fits 512 anyway
    with pytest.raises(AssertionError, match="the tokenizer was loaded"):
        check_geometry("longp", args(roberta_dir, 32, 470))  # near the limit: the template decides
