"""Where the first relevant passage sits in a relevant document (the long-document study's appendix B.4,
Figures 1 and 7; spec: shared/specs/longdoc.md, section 3).

Two ways to find it:

- sparse labels (MS MARCO: relevant passages are known, documents are judged): each relevant passage is matched
  approximately to documents (`matching`, which normalises both texts first), its character offset turned into a
  token offset (`offsets`); the candidate documents are the judged ones plus a BM25 top-k of the passage (`candidates`);
- dense labels (TREC DL, Robust04, Gov2, ClueWeb12: only documents are judged): each positive document is cut
  into sentence-preserving chunks (`chunks`), each chunk judged with the query by a language model with the
  UMBRELA prompt (`umbrela`), and the first chunk graded 1 or more is the position (`judging`); the pairs are
  the positive judgments, queries shuffled and interleaved (`pairs`). The judge's own position bias is
  checked on a sample of its chunks, judged again with their sentences reversed (`order_check`).

Both give one row per (query, document) (its columns: `posbias.data.first_relevant.ROW_COLUMNS`); `shares` bins
them (256 tokens in the study) into the table of shares and the coverage, `report` draws Figures 1 and 7; the estimates
are compared with the embedded generator's known answer offsets (`posbias.data.answer_passages`).

Every analysis stage has the same four orchestration files: `config` (its config section: schema fragment
`config.schema.yaml`, checks, accessor `CFG.positions`), `paths` (where its files go), `steps` (the job functions
that rules/positions.smk and its command line run) and `cli` (`posbias positions ...`).

Its role modules (docs/architecture.md, analysis stages): `report` draws the figures (the table of shares goes
through `posbias.reporting`). There is no `build` (each path's job finds its positions from the collection's own
files, through the helpers above) and no `stats`: `shares` counts bins and coverage and also holds the positions
file's columns and bins that both paths and `posbias.sweep.positions` read.
"""
