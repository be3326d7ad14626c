"""The data stage's config sections: `generator` (the embedded synthetic collection's generator) and
`collections` (collections read from a source: documents, Lucene index, truncation, expansions; checked with the
query sets, `posbias.config.sections.querysets`)."""

from __future__ import annotations

from pathlib import Path

from posbias.config.section import Section


GENERATOR = Section("generator", Path(__file__).with_name("generator.schema.yaml"))


COLLECTIONS = Section("collections", Path(__file__).with_name("collections.schema.yaml"))


SECTIONS = (GENERATOR, COLLECTIONS)
