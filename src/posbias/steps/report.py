"""Pipeline steps of reporting: Table 1, Table 4, the first-stage table and the FarRelevant figure."""

from __future__ import annotations

import pandas as pd

from posbias.io import atomic_write
from posbias.reporting.figures import farrelevant_bars
from posbias.reporting.tables import Column, Row, build_table, to_latex, to_markdown

RETRIEVER, RANDOM = "retriever", "random"


def _write_outputs(table: pd.DataFrame, columns: list[Column], caption: str, label: str,
                   tex: str, csv: str, md: str) -> None:
    with atomic_write(tex) as out:
        out.write(to_latex(table, columns, caption, label))
    with atomic_write(md) as out:
        out.write(to_markdown(table, columns, caption))
    with atomic_write(csv) as out:
        table.to_csv(out, index=False)


def _columns(spec: list[dict], querysets: dict) -> list[Column]:
    return [Column(c["queryset"], c["metric"], querysets[c["queryset"]]["alpha"],
                   c.get("header", f"{c['queryset']} {c['metric']}")) for c in spec]


def _alphas(columns: list[Column]) -> str:
    return ", ".join(f"{c.header}: $p < {c.alpha}$" for c in columns)


def table1(averaged: list[str], spec: dict, models: dict, querysets: dict, n_seeds: int,
           tex: str, csv: str, md: str) -> None:
    """Long-document rankers against their FirstP baselines."""
    per_query = pd.concat([pd.read_parquet(p) for p in averaged], ignore_index=True)
    columns = _columns(spec["columns"], querysets)
    rows = [Row(RETRIEVER, spec.get("retriever_label", "retriever"))]
    baselines = [m for m in spec["models"] if models[m]["baseline"] == m]
    rows += [Row(m, models[m]["label"]) for m in baselines]
    rows += [Row(m, models[m]["label"], gain_over=models[m]["baseline"], tests={"a": models[m]["baseline"]})
             for m in spec["models"] if m not in baselines]
    table = build_table(per_query, rows, columns)
    caption = (f"Rankers against their FirstP baselines. Per-query values are averaged over {n_seeds} seeds "
               f"before testing; relative gains are over the FirstP baseline with the same backbone; "
               f"superscript a: two-sided paired t-test against that baseline ({_alphas(columns)}).")
    _write_outputs(table, columns, caption, "tab:main", tex, csv, md)


def table4(averaged: list[str], spec: dict, models: dict, querysets: dict, n_seeds: int,
           tex: str, csv: str, md: str) -> None:
    """FarRelevant, zero-shot: gains over MaxP, tests against MaxP (a) and a long-context baseline (b)."""
    per_query = pd.concat([pd.read_parquet(p) for p in averaged], ignore_index=True)
    columns = _columns(spec["columns"], querysets)
    reference = spec["reference"]
    second = next((m for m in spec["second_reference"] if m in spec["models"]), None)
    rows = [Row(RANDOM, "random shuffle"), Row(RETRIEVER, spec.get("retriever_label", "retriever"))]
    for m in spec["models"]:
        if m == reference:
            rows.append(Row(m, models[m]["label"], tests={"b": second} if second and second != m else {}))
            continue
        tests = {"a": reference}
        if second and second != m:
            tests["b"] = second
        rows.append(Row(m, models[m]["label"], gain_over=reference, tests=tests))
    table = build_table(per_query, rows, columns)
    second_text = (f"superscript b: against {models[second]['label']}" if second
                   else "no long-context baseline configured for superscript b")
    caption = (f"FarRelevant, models trained on the standard training set (zero-shot). Per-query values "
               f"averaged over {n_seeds} seeds; gains are over {models[reference]['label']}; superscript a: "
               f"two-sided paired t-test against {models[reference]['label']}; {second_text} "
               f"({_alphas(columns)}).")
    _write_outputs(table, columns, caption, "tab:farrelevant", tex, csv, md)


def farrelevant_figure(per_seed: str, models: list[str], labels: dict, metric: str, outputs: list[str]) -> None:
    frame = pd.read_parquet(per_seed)
    frame = frame[frame["metric"] == metric]
    farrelevant_bars(frame, {m: labels[m] for m in models}, RANDOM, metric, outputs)


def first_stage_table(values: list[str], spec: dict, querysets: dict, tex: str, csv: str, md: str) -> None:
    """Each first-stage retriever on each query set; the first retriever listed is the reference."""
    per_query = pd.concat([pd.read_parquet(p) for p in values], ignore_index=True)
    columns = [Column(qs, metric, querysets[qs]["alpha"], f"{qs} {metric}")
               for qs in spec["querysets"] for metric in spec["metrics"]]
    reference, *others = spec["retrievers"]
    rows = [Row(reference, reference)] + [Row(r, r, gain_over=reference, tests={"a": reference}) for r in others]
    table = build_table(per_query, rows, columns)
    caption = (f"First-stage retrievers, top {spec['depth']} candidates per query. Gains are over {reference}; "
               f"superscript a: two-sided paired t-test against {reference} ({_alphas(columns)}).")
    _write_outputs(table, columns, caption, "tab:first-stage", tex, csv, md)
