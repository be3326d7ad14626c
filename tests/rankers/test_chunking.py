import torch

from posbias.rankers.chunking import ChunkGeometry, Chunker


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


def test_a_padded_query_puts_every_document_at_the_same_position(tokenizer):
    geometry = ChunkGeometry(max_query_tokens=5, chunk_tokens=4, stride=4, max_doc_tokens=8, pad_query=True)
    chunker = Chunker(tokenizer, geometry)
    cls, sep, pad = tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.pad_token_id
    short, long = [1101, 1102], [1201, 1202, 1203, 1204, 1205, 1206, 1207]  # the long one is cut to 5
    doc = list(range(2000, 2006))
    batch = chunker.batch([(short, doc), (long, doc)])
    first_doc_position = geometry.max_query_tokens + 2  # [CLS] + 5 query slots + [SEP]
    for b, query in enumerate((short, long)):
        for c, window in enumerate((doc[:4], doc[4:])):
            row, mask = batch.input_ids[b, c].tolist(), batch.attention_mask[b, c].tolist()
            kept = query[:5]
            assert row[:first_doc_position] == [cls, *kept, *[pad] * (5 - len(kept)), sep]
            assert row[first_doc_position:first_doc_position + len(window)] == window
            # the query's pad slots are masked; [CLS], the query, both [SEP]s and the window are not
            assert mask[:first_doc_position] == [1] * (1 + len(kept)) + [0] * (5 - len(kept)) + [1]
            assert mask[first_doc_position:] == [1] * (len(window) + 1) + [0] * (len(mask) - first_doc_position
                                                                                   - len(window) - 1)
            assert batch.token_type_ids[b, c, :first_doc_position].tolist() == [0] * first_doc_position


def test_without_padding_the_document_follows_the_query(tokenizer):
    chunker = Chunker(tokenizer, ChunkGeometry(max_query_tokens=5, chunk_tokens=4, stride=4, max_doc_tokens=8))
    batch = chunker.batch([([1101, 1102], [2000, 2001])])
    assert batch.input_ids[0, 0, 4].item() == 2000  # [CLS] q q [SEP] d


def test_the_batch_says_where_the_query_and_the_document_tokens_are(tokenizer):
    chunker = Chunker(tokenizer, ChunkGeometry(max_query_tokens=4, chunk_tokens=4, stride=3, max_doc_tokens=10))
    doc = list(range(2000, 2010))
    batch = chunker.batch([([1101, 1102], doc[:3]), ([1201, 1202, 1203], doc)])
    assert batch.query_mask.tolist() == [[True, True, False], [True, True, True]]
    flat = batch.input_ids.reshape(2, -1)
    for b, expected in enumerate((doc[:3], doc[0:4] + doc[3:7] + doc[6:10])):  # windows overlap by one token
        n = int(batch.doc_mask[b].sum())
        assert flat[b, batch.doc_positions[b, :n]].tolist() == expected
    assert batch.doc_mask[0].tolist() == [True] * 3 + [False] * 9


def test_token_types_only_where_the_tokenizer_emits_them(tokenizer):
    import copy

    geometry = ChunkGeometry(max_query_tokens=4, chunk_tokens=4, stride=4, max_doc_tokens=8)
    pairs = [([1101, 1102], list(range(2000, 2006)))]
    assert Chunker(tokenizer, geometry).batch(pairs).token_type_ids.any()  # BERT's: 1 on the document
    untyped = copy.deepcopy(tokenizer)
    untyped.model_input_names = ["input_ids", "attention_mask"]  # as Big-Bird's tokenizer says
    assert not Chunker(untyped, geometry).batch(pairs).token_type_ids.any()


def test_a_moved_batch_keeps_its_host_copy(tokenizer):
    """The encoder plans its groups from the host copy, so a batch on a GPU makes the host wait for nothing."""
    chunker = Chunker(tokenizer, ChunkGeometry(max_query_tokens=8, chunk_tokens=8, stride=8, max_doc_tokens=24))
    query = chunker.tokenize_queries(["capital of zorvia"])[0]
    batch = chunker.batch([(query, list(range(2000, 2020))), (query, list(range(2000, 2005)))])
    assert batch.on_host() is batch
    moved = batch.to("cpu")
    assert moved.host is batch and moved.to("cpu").host is batch  # moving again keeps the first host copy
    assert torch.equal(moved.input_ids, batch.input_ids) and moved.host.host is None
