"""Every audit battery's declaration (`posbias.audit.battery_declaration`), one module per battery. A module of this
package that defines `BATTERIES` is found by its file (`posbias.plugins`): a new battery is its function and its
declaration here. The order is the order of the defaults and of the cards: the batteries below, then any other by
its module's name. It imports nothing heavy: the config's check reads it in every Snakemake and posbias command."""

from __future__ import annotations

from posbias.plugins import declared

ESTABLISHED = ("sweep", "probes", "reader", "order", "grid", "reader_grid")

DECLARATIONS = declared(__name__, "BATTERIES", ESTABLISHED)
