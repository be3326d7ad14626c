"""Lost in the Middle (Liu et al., TACL 2024): does a language model use information in the middle of its input?

One idea per module:

- `files`: the stage's JSONL(.gz) files, read with line numbers and written atomically and reproducibly;
- `prompts`: the authors' prompt templates, byte for byte;
- `variants`: the prompt variants a config names (default, query-aware, random order, ...);
- `matching`: DPR's answer matcher (`has_answer`), which decides which retrieved passages are distractors;
- `qa_data`: the authors' multi-document QA files (reader, documents as their code sees them);
- `qa_builder`: the QA data at each gold position (and the oracle, closed-book and random-order inputs);
- `synthetic_qa`: NQ-shaped retrieval records from the embedded synthetic world (the offline stand-in);
- `kv`: the key-value retrieval data (seeded generator, the authors' files, moving the target);
- `exclusions`: which questions a model's context cannot hold, decided once over every position;
- `predict`: examples into `posbias.llm` requests and completions into prediction records (authors' layout);
- `metric`: the authors' QA metric (`best_subspan_em`) and KV accuracy, quirks included;
- `score`: scoring a predictions file;
- `stats`: per-position accuracy, Wilson intervals, paired McNemar tests against the first position (corrected
  within each curve) and best-worst gaps.

Which of the authors' quirks each module replicates or fixes is said in its docstring (spec `litm.md` §6).

Every analysis stage has the same four orchestration files: `config` (its config section: schema fragment
`config.schema.yaml`, checks, accessor `CFG.litm`), `paths` (where its files go), `steps` (the job functions
that rules/litm.smk and its command line run) and `cli` (`posbias litm ...`).

Its role modules (docs/architecture.md, analysis stages): `stats` is the statistics. There is no `build`: the
two tasks' data are built by peers, `qa_builder` (QA) and `kv` (key-value), that the steps call one per task, and
no `report`: the tables and figures are written by `posbias.reporting` (`position_tables`, `figures`).
"""
