"""`reproduction`: published numbers of the tables, compared with the reproduced ones (posbias.reproduction)."""

from __future__ import annotations

from pathlib import Path

from posbias import names
from posbias.config.section import ConfigError, Section
from posbias.reporting.columns import column_header


def check(cfg: dict, warnings: list[str]) -> None:
    """Published numbers (`reproduction`) name a configured table, one of its rows and one of its column headers,
    so that a typo is an error here, not a cell the reproduction table reports as never computed."""
    for table, spec in (cfg.get("reproduction") or {}).items():
        key, shown = f"reproduction.{table}", cfg["tables"].get(table)
        if shown is None:
            raise ConfigError(f"{key}: tables.{table} is not configured")
        originals = [(cfg["models"][m].get("debias") or {}).get("original") for m in shown["models"]]
        rows = [names.RETRIEVER, *([names.RANDOM] if table == "table4" else []), *shown["models"],
                *(o for o in originals if o)]
        headers = [column_header(c) for c in shown["columns"]]
        for system, values in spec["values"].items():
            if system not in rows:
                raise ConfigError(f"{key}.values.{system}: not a row of tables.{table} (its models, "
                                  f"{names.RETRIEVER}{', ' + names.RANDOM if table == 'table4' else ''})")
            unknown = [h for h in values if h not in headers]
            if unknown:
                raise ConfigError(f"{key}.values.{system}: {unknown[0]!r} is not a header of tables.{table}.columns; "
                                  f"headers: {', '.join(map(repr, headers))}")


SECTION = Section("reproduction", Path(__file__).with_name("reproduction.schema.yaml"), check=check)
