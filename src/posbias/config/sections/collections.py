"""`collections`: collections read from a source (documents, Lucene index, truncation, expansions); checked with the query sets."""

from pathlib import Path

from posbias.config.section import Section

SECTION = Section("collections", Path(__file__).with_name("collections.schema.yaml"))
