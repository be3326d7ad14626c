"""What a bias probe declares about itself: its name, whether it runs unless the config lists probes itself, whether
it samples with a seed of its own (`probes.seeds.<name>`), and the two functions that build it from the query table
and the `probes` section, as `"module:function"`:

- `candidates(queries, section)`: the probe's candidate pool (the query table's report counts it);
- `pairs(queries, section, n, seed)`: its `n` document pairs, sampled with `seed`.

Both are imported only when a probe is built (`posbias.plugins.load`), so reading the declarations stays cheap: the
config's schema lists the probes from them in every command. The declarations themselves are in
`posbias.probes.declarations`, one module per probe (the position probes share one), found by their files. The
helpers below read what the `probes` section says to one probe (its variant, the rest of its document, its seed).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from posbias.plugins import load


@dataclass(frozen=True)
class ProbeDeclaration:
    name: str
    candidates: str | None = None  # "module:function"; None: built by the steps themselves (poison, from the foil's)
    pairs: str | None = None
    by_default: bool = True  # in the default `probes.probes`
    seeded: bool = True  # samples with `probes.seeds.<name>` (else another probe's seed)

    def pool(self, queries: list, section: Mapping) -> list:
        """The probe's candidates in this query table."""
        return load(self.candidates)(queries, section)

    def build(self, queries: list, section: Mapping, n: int, seed: int) -> list:
        """The probe's `n` pairs."""
        return load(self.pairs)(queries, section, n, seed)


def variant_of(section: Mapping, name: str, default: str | None = None) -> str | None:
    """`probes.variants.<name>`: the authors' code's behaviour where it departs from the paper, or the paper's."""
    return section.get("variants", {}).get(name, default)


def rest_of(section: Mapping) -> str:
    """What fills a probe document beyond its evidence (`probes.variants.rest`)."""
    return variant_of(section, "rest", "paper")


def seed_of(section: Mapping, probe: str) -> int:
    """The seed `probe` samples with: `probes.seeds.<probe>`, else `probes.seeds.default`, else 0."""
    seeds = section.get("seeds", {})
    return int(seeds.get(probe, seeds.get("default", 0)))
