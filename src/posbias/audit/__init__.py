"""The position-sensitivity audit (issue 31): any model, as it comes, through the same position tests.

A model spec names a kind and where the model is (`posbias audit --model cross-encoder:DIR --out audits/`); the
model is loaded with its own code, runs every battery its kind can take, and each battery's values go through the
metric suite every position curve in posbias shares (`posbias.stats.position_curve`). Modules, one idea each:

- `spec`: parsing a model spec (kind, target, typed options) and what each kind can do
- `models`: the model a spec names, loaded as one of `posbias.scoring`'s pair scorers (a Hugging Face
  cross-encoder, a sentence-transformers bi-encoder, a posbias checkpoint, a language model as a pointwise ranker)
  or as a language model answering through the response cache
- `haystack`: the embedded sweep (needles, haystacks and distractors in the model's own tokens), or a real passage
  collection
- `batteries`: the sweep, the position probes, Lost in the Middle and the listwise order, each as values per
  (unit, position), each declared in `battery_declarations` (found by its file, `posbias.plugins`); `battery_settings`
  their defaults and checks; `results` a battery's result and its summaries
- `card`: the card per model and the leaderboard, from the battery files
- `export`: a first-token FirstP checkpoint as a Hugging Face ELECTRA sequence-classification model

Like every analysis stage it has `config` (the `audit` section, `CFG.audit`), `steps` (the job functions:
one battery, the reports) and `cli` (`posbias audit`, `posbias export-hf`); rules/audit.smk runs the steps.
"""
