"""`statistics`: the paired tests' settings the tables read."""

from pathlib import Path

from posbias.config.section import Section

SECTION = Section("statistics", Path(__file__).with_name("statistics.schema.yaml"))
