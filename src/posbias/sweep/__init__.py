"""Position sweeps and position breakdowns (issue 17, point 6).

The sweep takes FarRelevant-style documents (one relevant passage each) and moves the relevant passage through
a fixed-length document, keeping everything else: each (query, position) becomes a query of a generated query
set whose candidates are the source query set's, with the relevant document swapped for the variant, so every
ranker reranks the same distractors at every position. Modules, one idea each:

- `units`: the relevant passage located in its document, the rest split into sentence units (placed with
  `posbias.data.placement`: positions spread over the unit boundaries, the variants and their true start tokens)
- `candidates`: the source candidates with the relevant document replaced by a variant
- `build`: one query's variants (top-up from the passage pool, seeded), the whole sweep collection
- `positions`: a generic `qid<TAB>start` file (true or estimated first-relevant positions)
- `stats`: the curves (per model and position, MRR and mean rank with intervals, paired tests against the first
  position) and the breakdown (a query set's metric per model by position bin, Welch tests against the first bin)
- `report`: their tables and the sweep figure

Every analysis stage has the same four orchestration files: `config` (its config section: schema fragment
`config.schema.yaml`, checks, accessor `CFG.sweep`), `paths` (where its files go), `steps` (the job functions
that rules/sweep.smk and its command line run) and `cli` (`posbias sweep ...`).

Its role modules (docs/architecture.md, analysis stages) are `build` (the entry the steps call; `units` and
`candidates` are its helpers), `stats` and `report`.
"""
