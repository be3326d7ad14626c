import pytest
import torch

from posbias.rankers.chunking import ChunkGeometry, Chunker


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


def test_batch_masks_and_layout(tokenizer):
    chunker = Chunker(tokenizer, ChunkGeometry(max_query_tokens=3, chunk_tokens=4, stride=4, max_doc_tokens=12))
    query = [101 + 1000, 1001, 1002, 1003]  # four tokens, cut to three
    short, long = list(range(2000, 2003)), list(range(3000, 3020))
    batch = chunker.batch([(query, short), (query, long)])
    assert batch.chunk_mask.tolist() == [[True, False, False], [True, True, True]]
    cls, sep, pad = tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.pad_token_id
    assert batch.input_ids[1, 2].tolist() == [cls, 1101, 1001, 1002, sep, 3008, 3009, 3010, 3011, sep]
    assert batch.input_ids[0, 0].tolist() == [cls, 1101, 1001, 1002, sep, 2000, 2001, 2002, sep, pad]
    assert batch.attention_mask[0, 0].tolist() == [1] * 9 + [0]
    assert batch.token_type_ids[0, 0].tolist() == [0] * 5 + [1] * 4 + [0]
    # padding-only chunks are all padding
    assert torch.all(batch.input_ids[0, 1:] == pad) and torch.all(batch.attention_mask[0, 1:] == 0)
