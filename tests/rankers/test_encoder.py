import torch

from posbias.rankers.chunking import ChunkGeometry, Chunker
from posbias.rankers.encoder import ChunkEncoder, length_groups, load_backbone


def test_token_states_are_the_querys_and_the_rejoined_documents(tiny_backbone, tokenizer):
    backbone = load_backbone(tiny_backbone).eval()
    chunker = Chunker(tokenizer, ChunkGeometry(max_query_tokens=4, chunk_tokens=4, stride=4, max_doc_tokens=12))
    doc = list(range(2000, 2010))
    batch = chunker.batch([([1101, 1102], doc[:3]), ([1201, 1202, 1203], doc)])
    with torch.no_grad():
        every = ChunkEncoder(backbone, "cls", "all")(batch)
        last = ChunkEncoder(backbone, "cls", "last")(batch)
        pooled = ChunkEncoder(backbone, "cls")(batch)
        # the second pair's chunks, encoded one by one
        valid = batch.chunk_mask[1]
        states = backbone(input_ids=batch.input_ids[1][valid], attention_mask=batch.attention_mask[1][valid],
                          token_type_ids=batch.token_type_ids[1][valid], output_hidden_states=True).hidden_states
    # pooled alone takes the first-token shortcut: the same vectors up to float rounding
    assert pooled.query_states is None and torch.allclose(pooled.pooled, every.pooled, atol=1e-5)
    assert every.query_states.shape == (2, 3, 3, 32) and last.query_states.shape == (2, 1, 3, 32)
    assert torch.equal(every.doc_states[:, -1], last.doc_states[:, 0])
    for layer in range(3):
        # the query from the first chunk ([CLS] q1 q2 q3 [SEP] ...), the document chunk after chunk
        assert torch.allclose(every.query_states[1, layer], states[layer][0, 1:4], atol=1e-6)
        expected = torch.cat([states[layer][0, 5:9], states[layer][1, 5:9], states[layer][2, 5:7]])
        assert torch.allclose(every.doc_states[1, layer, :10], expected, atol=1e-6)
    assert every.doc_mask.tolist() == [[True] * 3 + [False] * 7, [True] * 10]
    assert every.query_mask.tolist() == [[True, True, False], [True, True, True]]


def test_length_groups_cut_where_a_chunk_would_be_padded_by_more_than_a_quarter():
    assert length_groups([40, 40, 31, 30, 29, 12, 10, 9]) == [(0, 4), (4, 5), (5, 8)]
    assert length_groups([5]) == [(0, 1)]
    assert length_groups([]) == []


def test_grouped_and_shortcut_encodings_match_one_padded_forward(tiny_backbone, tokenizer):
    backbone = load_backbone(tiny_backbone).eval()
    chunker = Chunker(tokenizer, ChunkGeometry(max_query_tokens=4, chunk_tokens=8, stride=8, max_doc_tokens=24))
    doc = list(range(2000, 2024))
    # chunks of 8, 8, 1 and 8, 3 document tokens: three length groups
    batch = chunker.batch([([1101, 1102], doc[:17]), ([1201, 1202, 1203], doc[:11]), ([1301], doc[:2])])
    valid = batch.chunk_mask
    with torch.no_grad():
        tokens = backbone(input_ids=batch.input_ids[valid], attention_mask=batch.attention_mask[valid],
                          token_type_ids=batch.token_type_ids[valid]).last_hidden_state
        for pooling in ("cls", "mean", "max"):
            encoder = ChunkEncoder(backbone, pooling)
            assert encoder.first_token_only == (pooling == "cls")
            pooled = encoder(batch).pooled[valid]
            real = batch.attention_mask[valid].bool()
            expected = {"cls": tokens[:, 0],
                        "mean": (tokens * real[..., None]).sum(1) / real.sum(1, keepdim=True),
                        "max": tokens.masked_fill(~real[..., None], float("-inf")).amax(1)}[pooling]
            assert torch.allclose(pooled, expected, atol=1e-5)
        grouped = ChunkEncoder(backbone, "cls", "last")(batch)
    assert torch.allclose(grouped.pooled[valid], tokens[:, 0], atol=1e-5)
    n_chunks, length = batch.input_ids.shape[1:]
    full = tokens.new_zeros((3, n_chunks, length, tokens.shape[-1]))
    full[valid] = tokens
    joined = full.reshape(3, n_chunks * length, -1)
    expected = joined.gather(1, batch.doc_positions[..., None].expand(-1, -1, tokens.shape[-1]))
    assert torch.allclose(grouped.doc_states[:, 0][batch.doc_mask], expected[batch.doc_mask], atol=1e-5)
