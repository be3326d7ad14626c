"""The language-model layer: one `generate(requests, decoding)` over local Hugging Face models, OpenAI and
OpenAI-compatible servers, Anthropic and a deterministic mock, behind a response cache.

- `types`: what goes in (`Request`, `Decoding`) and what comes out (`Completion`);
- `spec`: a model's config block (`ModelSpec`: backend, model, revision, wrapper, ...);
- `wrappers`: the prompt wrappers (chat templates, instruction templates), chosen explicitly, never guessed;
- `cache`: the append-only response cache (`read_write`, `read_only`, `off`);
- `backends/`: one module per backend kind;
- `generate`: `LanguageModel`, which joins a backend, its wrapper and the cache.
"""
