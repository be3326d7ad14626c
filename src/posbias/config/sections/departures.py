"""`departures`: where this experiment departs from the paper it reproduces (read by the provenance page)."""

from pathlib import Path

from posbias.config.section import Section

SECTION = Section("departures", Path(__file__).with_name("departures.schema.yaml"))
