import torch

from posbias.rankers.chunking import ChunkGeometry, Chunker
from posbias.rankers.encoder import ChunkEncoder, load_backbone


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
    assert pooled.query_states is None and torch.equal(pooled.pooled, every.pooled)
    assert every.query_states.shape == (2, 3, 3, 32) and last.query_states.shape == (2, 1, 3, 32)
    assert torch.equal(every.doc_states[:, -1], last.doc_states[:, 0])
    for layer in range(3):
        # the query from the first chunk ([CLS] q1 q2 q3 [SEP] ...), the document chunk after chunk
        assert torch.allclose(every.query_states[1, layer], states[layer][0, 1:4], atol=1e-6)
        expected = torch.cat([states[layer][0, 5:9], states[layer][1, 5:9], states[layer][2, 5:7]])
        assert torch.allclose(every.doc_states[1, layer, :10], expected, atol=1e-6)
    assert every.doc_mask.tolist() == [[True] * 3 + [False] * 7, [True] * 10]
    assert every.query_mask.tolist() == [[True, True, False], [True, True, True]]
