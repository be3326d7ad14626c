"""`generator`: the embedded synthetic collection's generator."""

from pathlib import Path

from posbias.config.section import Section

SECTION = Section("generator", Path(__file__).with_name("generator.schema.yaml"))
