"""The pieces of a listwise (RankGPT-style) reranker that do not talk to a language model.

- `windows`: which slices of the candidate list are ranked, back to front, and how an answer reorders one;
- `prompt`: the chat messages that ask for a permutation of one window;
- `parsing`: a model's answer turned into a permutation, whatever it wrote;
- `firstp`: the FirstP cut of a document to its longest sentence prefix within a token budget.

`posbias.rankers.rankgpt` joins them with a language model into a run.
"""
