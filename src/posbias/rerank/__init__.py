"""The rerank stage: candidates reranked by a trained checkpoint, a zero-shot model or RankGPT (`config`, `paths`,
`steps`, `cli`; the scoring itself: `posbias.rankers`)."""
