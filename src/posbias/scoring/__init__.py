"""Anything that gives a (query, document) pair a number, behind one face (`protocol.Scorer`: `score(pairs)`, the
document tokens it reads at once, how it counts tokens). The bias probes score their pairs with these, the audit's
batteries sweep them, and the mitigations count their inputs.

- `protocol`: the `Scorer` face every kind implements;
- `scorers`: the bias probes' kinds, built from a `probes.scorers` entry: a bi-encoder scored by a raw dot product
  or cosine, Lucene BM25, and a ranker posbias trained (`CheckpointScorer`, which the audit loads too);
- `cross_encoder`: any Hugging Face sequence-classification model, whole or window by window;
- `bi_encoder`: a sentence-transformers model as it comes;
- `llm_ranker`: a language model as a pointwise ranker (yes against no).
"""
