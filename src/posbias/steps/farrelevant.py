"""Pipeline step: FarRelevant from a real source (`farrelevant.source`), built from passages or imported.

The embedded FarRelevant (`source.kind: synthetic`) is built by `posbias.steps.data.build_farrelevant`.
"""

from __future__ import annotations

from posbias.data import farrelevant_sources


def build_farrelevant_source(source: dict, settings: dict, tokenizer: str, out_dir: str, queryset: str,
                             train_queryset: str | None = None) -> dict:
    """Write docs.jsonl and the test (and training) query sets' queries, qrels and positions under `out_dir`."""
    builders = {"ir_datasets": farrelevant_sources.build_from_passages, "local": farrelevant_sources.import_local}
    if source["kind"] not in builders:
        raise ValueError(f"farrelevant.source.kind {source['kind']!r} is not built here (one of {sorted(builders)})")
    return builders[source["kind"]](source, settings, tokenizer, out_dir, queryset, train_queryset)
