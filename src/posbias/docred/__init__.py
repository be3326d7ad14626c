"""Re-DocRED documents, the queries made from their relations, and the controlled document pairs built from them:
the domain that the bias probes (`posbias.probes`) and the audit's probe battery (`posbias.audit`) share.

- `documents`: the released `*_revised.json` files as typed documents, and their text.
- `queries`: the query table (relation templates in `templates.tsv`, the longest head name, the
  duplicate filter).
- `synthetic`: a Re-DocRED-format world the demo writes itself.
- `sampling`: the study's seeded row selection (pandas `sample`, `groupby().tail`, `drop_duplicates`).
- `pairs`: the pair every probe builds, and the candidate conditions they share.
- `position`: the position probes' pairs (the evidence sentence first or last, or swept through the document),
  named in `probe_names`.
"""
