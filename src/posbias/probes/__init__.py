"""Bias probes (Fayyaz et al. 2025, "Collapse of Dense Retrievers"; spec: shared/specs/probes.md): pairs of
documents built from Re-DocRED that differ in one property, scored by any retriever or ranker, and compared with
paired tests.

The documents, their query table, the seeded sampling, the pair every probe builds and the position probes'
pairs are the domain the audit shares (`posbias.docred`); the paired statistics of one probe and scorer are
`posbias.stats.document_pairs`, the scorers `posbias.scoring`. Here:

- `declarations`: every probe by name, what the config gives it.
- `brevity`, `answer`, `literal`, `repetition`, `foil`, `poison`: the other probes' pair constructions (spec
  §2.1-§2.7).
- `stats`: the position sweep probe through the metric suite every position curve shares.
- `rag`: RAG poisoning (readers, the judge's prompt and verdict, the accuracy table); `judge_swap`: the judge's own
  position bias, a sample of its verdicts asked again with the model answer before the evidence.
- `report`: the probe table, the RAG table and the figures (sweep, heatmaps, summary).

Every analysis stage has the same four orchestration files: `config` (its config section: schema fragment
`config.schema.yaml`, checks, accessor `CFG.probes`), `paths` (where its files go), `steps` (the job functions
that rules/probes.smk and its command line run) and `cli` (`posbias probes ...`).

Its role modules (docs/architecture.md, analysis stages) are `stats` and `report`. There is no `build`: the
steps build the query table (`posbias.docred.queries`) and then each probe's pairs with the probe's own module,
side by side.
"""
