"""Lost in the Middle (Liu et al., TACL 2024): does a language model use information in the middle of its input?

What the model reads and how its answer is scored (the prompts, the QA and KV data at each position, the
examples and prediction records, the metric) is the domain the audit's reader batteries share, `posbias.reading`.
Here, one idea per module:

- `exclusions`: which questions a model's context cannot hold, decided once over every position;
- `score`: scoring a predictions file;
- `stats`: per-position accuracy, Wilson intervals, paired McNemar tests against the first position (corrected
  within each curve) and best-worst gaps.

Every analysis stage has the same four orchestration files: `config` (its config section: schema fragment
`config.schema.yaml`, checks, accessor `CFG.litm`), `paths` (where its files go), `steps` (the job functions
that rules/litm.smk and its command line run) and `cli` (`posbias litm ...`).

Its role modules (docs/architecture.md, analysis stages): `stats` is the statistics. There is no `build`: the
two tasks' data are built by `posbias.reading.qa_builder` (QA) and `posbias.reading.kv` (key-value), that the
steps call one per task, and no `report`: the tables and figures are written by `posbias.reporting`
(`position_tables`, `figures`).
"""
