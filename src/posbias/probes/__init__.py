"""Bias probes (Fayyaz et al. 2025, "Collapse of Dense Retrievers"; spec: shared/specs/probes.md): pairs of
documents built from Re-DocRED that differ in one property, scored by any retriever or ranker, and compared with
paired tests.

- `redocred`: the released `*_revised.json` files as typed documents, and their text.
- `queries`: the query table (relation templates in `templates.tsv`, the longest head name, the duplicate filter).
- `sampling`: the study's seeded row selection (pandas `sample`, `groupby().tail`, `drop_duplicates`).
- `pairs`: the pair every probe builds, and the candidate conditions they share.
- `position`, `brevity`, `answer`, `literal`, `repetition`, `foil`: the probes' pair constructions (spec §2.1-§2.7).
- `synthetic`: a Re-DocRED-format world the demo writes itself.
- `stats`: the paired statistics of one probe and scorer.
- `rag`: RAG poisoning (readers, the judge's prompt and verdict, the accuracy table); `judge_swap`: the judge's own
  position bias, a sample of its verdicts asked again with the model answer before the evidence.
- `report`: the probe table, the RAG table and the figures (sweep, heatmaps, summary).

Every analysis stage has the same four orchestration files: `config` (its config section: schema fragment
`config.schema.yaml`, checks, accessor `CFG.probes`), `paths` (where its files go), `steps` (the job functions
that rules/probes.smk and its command line run) and `cli` (`posbias probes ...`).

Its role modules (docs/architecture.md, analysis stages) are `stats` and `report`. There is no `build`: the
steps build the query table (`queries`) and then each probe's pairs with the probe's own module, side by side.
"""
