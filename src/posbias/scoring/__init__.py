"""Anything that gives a (query, document) pair a number, behind one face (`protocol.Scorer`: `score(pairs)`, the
document tokens it reads at once, how it counts tokens). The study reranks its candidates with these, the bias
probes score their pairs, the audit's batteries sweep them, and the mitigations count their inputs.

- `protocol`: the `Scorer` face every kind implements;
- `ranker`: a ranker posbias builds (trained, or zero-shot from its pretrained weights), on documents as text or as
  a token store's ids (`RankerScorer`);
- `reranking`: the study's and the sweep's reranking of candidate files with a `RankerScorer`;
- `scorers`: the bias probes' kinds, built from a `probes.scorers` entry: a bi-encoder scored by a raw dot product
  or cosine, Lucene BM25, and a checkpoint (a `RankerScorer`, which the audit loads too);
- `cross_encoder`: any Hugging Face sequence-classification model, whole or window by window;
- `bi_encoder`: a sentence-transformers model as it comes;
- `llm_ranker`: a language model as a pointwise ranker (yes against no).
"""
