"""The audit's reports, made from the battery files alone (`posbias.audit.steps`):

- a card per model (`<out>/<name>/card.html`): one self-contained page opening with the verdict in words
  (`posbias.audit.verdict`), then each battery's curve (the metric by position with its bootstrap interval,
  significant drops marked) and a short summary, then the details (the metric suite, the curve's numbers, the
  first-versus-last probe), what was loaded and the environment that ran it;
- a depth x length grid's own files (`<out>/<name>/<battery>.heatmap.{png,pdf}` and the table of its cells,
  `.heatmap.{csv,md,tex,html}`);
and, in `posbias.audit.leaderboard`, the leaderboard (`<out>/leaderboard.{csv,md,tex,html}`: a row per model
and battery, the summary numbers side by side), in `posbias.audit.mitigation_table`, the mitigation table
(`<out>/mitigations.{csv,md,tex,html}`).
`posbias.audit.steps.write_reports` writes them.
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from posbias.audit.battery_settings import DECLARED
from posbias.audit.verdict import TESTS, corrected, position_label, verdicts
from posbias.errors import InputError
from posbias.io import atomic_write
from posbias.reporting.render import Table, html_page, html_table, number, write_tables

CARD = "card.html"
SUMMARY_FIELDS = [("reference_mean", "at the first position"), ("best", "best"), ("worst", "worst"),
                  ("psi", "PSI (1 - worst/best)"), ("psi_above_chance", "PSI above chance ((best - worst) / "
                                                                         "(best - chance))"),
                  ("worst_drop", "worst drop from the first (relative)"),
                  ("best_worst_gap", "best-worst gap"), ("best_worst_gap_relative", "best-worst gap (relative)"),
                  ("primacy", "primacy (first - middle)"), ("primacy_relative", "primacy (relative)"),
                  ("recency", "recency (last - middle)"), ("recency_relative", "recency (relative)"),
                  ("significant_drops", "significant drops"),
                  ("detectable_drop", "smallest drop found with 80% power"), ("reach", "reach (position, 1 = first)"),
                  ("reach_tokens", "reach (tokens)"), ("reach_fraction", "reach / window"),
                  ("reach_censored", "nothing dropped"), ("underpowered", "too few units")]
TOKEN_FIELDS = ("tokens", "reach_tokens")  # shown in whole tokens
# a curve on an axis (a grid's depths): its mean over positions weighted by the axis, and plain
WEIGHTED_FIELDS = [("mean_weighted", "mean over depths (depth-weighted)"),
                   ("mean_unweighted", "mean over depths (unweighted)")]
# the by-length table's summary numbers (`length_table`)
LENGTH_FIELDS = [("reference_mean", "first"), ("worst", "worst"), ("psi", "PSI"),
                 ("psi_above_chance", "PSI above chance"), ("significant_drops", "drops"),
                 ("reach", "reach (position)")]
# every summary number, the relative ones included (the CSV); the other formats show the main ones


def read_records(out: str | Path, jobs: Sequence[tuple[str, str]] | None = None) -> dict[str, list[dict]]:
    """The battery records under `out` by model name (each model's in battery order); `jobs`, (name, battery)
    pairs, restricts them: a battery a model no longer runs is left out although its files stay (a config that
    drops it reruns nothing else)."""
    wanted = None if jobs is None else {(name, battery) for name, battery in jobs}
    found: dict[str, list[dict]] = {}
    for path in sorted(Path(out).glob("*/*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(record, dict) and "battery" in record and (
                wanted is None or (record["name"], record["battery"]) in wanted):
            found.setdefault(record["name"], []).append(record)
    for records in found.values():
        records.sort(key=lambda r: DECLARED[r["battery"]].card_order)
    missing = sorted({name for name, _ in wanted or ()} - set(found))
    if missing:
        raise InputError(f"{out}: no audit results for {missing}")
    return found


def cell_text(value, digits: int = 3) -> str:
    """A cell's text (`html_table` escapes it)."""
    if isinstance(value, bool):  # before float: a bool is an int
        return "yes" if value else "no"
    if isinstance(value, float):
        return number(value, digits)
    return "–" if value is None else str(value)


def curve_figure(curve: pd.DataFrame, record: Mapping) -> str:
    """The curve (`curve_plot`) as an inline PNG: an <img> with a data URL."""
    return inline_png(curve_plot(curve, record), f"{record['battery']} curve", 600)


def curve_plot(curve: pd.DataFrame, record: Mapping):
    """The curve as a matplotlib figure: the mean per position and its interval, the reference's mean dashed,
    significant drops as filled markers, chance dotted, the model's window where the positions are tokens."""
    from posbias.reporting.figure_files import plt

    x = curve["tokens"] if "tokens" in curve else curve["position"] + 1
    fig, ax = plt.subplots(figsize=(6, 3.2))
    ax.fill_between(x, curve["ci_low"], curve["ci_high"], alpha=0.2, color="tab:blue", linewidth=0)
    ax.plot(x, curve["mean"], marker="o", color="tab:blue", markerfacecolor="white")
    dropped = curve[curve["drop"].astype(bool)]
    ax.plot(dropped["tokens"] if "tokens" in curve else dropped["position"] + 1, dropped["mean"], "o",
            color="tab:red", label="significant drop")
    ax.axhline(curve["mean"].iloc[0], color="grey", linestyle="--", linewidth=1, label="first position")
    chance = record.get("extra", {}).get("chance")
    if chance:  # a floor of 0 (a reader's) is the axis itself
        ax.axhline(chance, color="black", linestyle=":", linewidth=1, label="chance")
    window = record.get("model", {}).get("window")
    if "tokens" in curve and window and window < float(curve["tokens"].max()):
        ax.axvline(window, color="tab:orange", linewidth=1, label=f"window ({window} tokens)")
    arranged = record.get("extra", {}).get("arrange") == "ends"  # the context is not in this order
    ax.set_xlabel("needle start (model tokens)" if "tokens" in curve else
                  "gold document's retrieval rank (the context: best at both ends)" if arranged else
                  "position (1 = first)")
    if "tokens" not in curve:
        ax.set_xticks(curve["position"] + 1)
    ax.set_ylabel(record["metric"])
    ax.legend(fontsize=7, loc="best")
    ax.grid(alpha=0.3)
    return fig


def inline_png(fig, alt: str, width: int) -> str:
    """The figure as an <img> holding its PNG (a data URL: the card stays one self-contained file), then closed;
    the PNG's bytes are the same on every run (`posbias.reporting.figure_files`' fixed metadata)."""
    from posbias.reporting.figure_files import DPI, METADATA, plt

    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI, metadata=METADATA["png"])
    plt.close(fig)
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{data}" width="{width}">'


def reach_text(summary: Mapping) -> str:
    """The reach position counted from 1, "≥" when nothing dropped (the model may read further than tested)."""
    return ("≥ " if summary.get("reach_censored") else "") + str(int(summary["reach"]) + 1)


def grid_cells(curve: pd.DataFrame, record: Mapping) -> pd.DataFrame:
    """A grid's cells: the metric's mean per length (rows, longest first) and depth (columns)."""
    depths = record["extra"]["depths"]
    table = curve.pivot_table(index="length", columns="position", values="mean").sort_index(ascending=False)
    table.columns = [depths[p] for p in table.columns]
    return table


def heatmap(curve: pd.DataFrame, record: Mapping):
    """A grid's heatmap (a matplotlib figure): the cells with their values printed, lengths in the model's tokens
    (a reader's: the mean prompt its backend counted)."""
    from posbias.reporting.figure_files import plt

    table = grid_cells(curve, record)
    fig, ax = plt.subplots(figsize=(6.4, 0.5 * len(table) + 1.6))
    image = ax.imshow(table.to_numpy(), aspect="auto", cmap="viridis", vmin=0, vmax=1)
    ax.set_xticks(range(len(table.columns)), [f"{depth:g}" for depth in table.columns])
    ax.set_yticks(range(len(table)), [str(int(length)) for length in table.index])
    for (row, column), value in pd.DataFrame(table.to_numpy()).stack().items():
        ax.text(column, row, f"{value:.2f}", ha="center", va="center", fontsize=7,
                color="white" if value < 0.5 else "black")
    ax.set_xlabel("gold document's depth (share of the context)" if record["battery"] == "reader_grid"
                  else "needle depth (share of the document)")
    ax.set_ylabel("length (model tokens)")
    fig.colorbar(image, ax=ax, label=record["metric"])
    ax.set_title(f"{record['name']}: {record['battery']}", fontsize=9)
    return fig


def grid_files(out: str | Path, name: str, battery: str) -> dict[str, str]:
    stem = Path(out) / name / f"{battery}.heatmap"
    return {fmt: f"{stem}.{fmt}" for fmt in ("png", "pdf", "csv", "md", "tex", "html")}


def write_grid_files(out: str | Path, record: Mapping) -> dict[str, str]:
    """A grid's heatmap as PNG and PDF and its cells as a table (CSV, Markdown, LaTeX, HTML)."""
    from posbias.reporting.figure_files import save_figure

    files = grid_files(out, record["name"], record["battery"])
    curve = pd.read_csv(Path(out) / record["name"] / f"{record['battery']}.curve.csv")
    save_figure(heatmap(curve, record), [files["png"], files["pdf"]])
    cells = grid_cells(curve, record)
    header = ["length (tokens)", *(f"depth {depth:g}" for depth in cells.columns)]
    body = [[str(int(length)), *(number(value) for value in row)] for length, row in cells.iterrows()]
    caption = (f"{record['name']}, {record['battery']}: {record['metric']} with the needle at each depth (a share of "
               f"the context) of contexts of each length (the model's tokens), over {record['n_units']} units.")
    frame = cells.reset_index().melt(id_vars="length", var_name="depth", value_name=record["metric"])
    write_tables({fmt: files[fmt] for fmt in ("csv", "md", "tex", "html")}, frame,
                 Table(header, body, caption, f"tab:audit-{record['name']}-{record['battery']}"))
    return files


def _grid_section(record: Mapping, curve: pd.DataFrame) -> str:
    """A grid: the heatmap and the metric suite at each length."""
    lengths = record["summary"]["lengths"]
    keys = [key for key, _ in SUMMARY_FIELDS  # the main numbers: the relative ones are in the battery's JSON
            if key not in ("best", "worst", "reach_censored", "underpowered") and not key.endswith("_relative")]
    labels = dict(SUMMARY_FIELDS)
    if any("mean_weighted" in s for s in lengths.values()):  # records written before the weighted means lack them
        keys += [key for key, _ in WEIGHTED_FIELDS]
        labels.update(WEIGHTED_FIELDS)
    header = ["length (tokens)", *(labels[key] for key in keys)]
    body = [[length, *(cell_text({**s, "reach": reach_text(s)}.get(key), 0 if key in TOKEN_FIELDS else 3)
                       for key in keys)] for length, s in lengths.items()]
    stats = record["settings"]["statistics"]
    caption = (f"The metric suite at each length ({record['test']} tests against the first depth, "
               f"{stats['correction']} over each length's depths, alpha {stats['alpha']}: one family per length, "
               f"none across lengths, so with {len(lengths)} lengths a drop somewhere on the grid is more likely "
               f"than alpha by chance); primacy and recency against the middle weighted by the depth each "
               f"position stands for (the trapezoid rule over the interior depths); the mean over depths "
               f"weighted the same way over the whole axis (each depth half the gaps to its neighbours, the weights "
               f"summing to one), beside the plain mean over the positions, which the depths bunched near both ends "
               f"pull towards the ends; {record['extra'].get('needles', 'gold')} needles.")
    figure = inline_png(heatmap(curve, record), f"{record['battery']} heatmap", 640)
    return "\n".join([f"<h2>{html.escape(DECLARED[record['battery']].title)}</h2>", figure, sizing_note(record),
                      html_table(header, body, caption), length_table(record)])


def length_table(record: Mapping) -> str:
    """The curve's summary per document-length bucket beside the pooled one (`posbias.audit.results.by_length`,
    PosIR's buckets), as a compact table; empty for a battery without them (the embedded world's)."""
    found = record["summary"].get("by_length")
    if not found:
        return ""
    weighted = any((row["summary"] or {}).get("mean_weighted") is not None for row in found["buckets"])
    fields = LENGTH_FIELDS + (WEIGHTED_FIELDS[:1] if weighted else [])
    header = [f"document length ({found['unit']})", "units", "lengths", *(label for _, label in fields)]
    body = []
    for row in found["buckets"]:
        summary = row["summary"] or {}
        units = f"{row['units']}" + (" †" if row["few_units"] and row["units"] else "")
        span = (f"{number(row['min_length'], 0)}–{number(row['max_length'], 0)}" if row["units"] else "–")
        body.append([row["bucket"], units, span, *(_length_cell(summary, key) for key, _ in fields)])
    caption = (f"Length-controlled curves: the units grouped by their document's length in {found['unit']} into "
               f"PosIR's buckets (Zeng et al. 2026, arXiv 2601.08363: up to {', '.join(map(str, found['bounds']))} "
               f"and above, right-closed), the metric suite run on each bucket's units alone, beside every unit "
               f"pooled (all), so a position effect that only long documents have is not averaged away by short "
               f"ones." + (" A grid's unit is a question at one of its lengths." if "lengths" in record["summary"]
                          else "") +
               (" PosIR's bounds are in tokens; these lengths are words, about three quarters as many as a "
                "subword tokenizer counts in English text." if found["unit"] == "words" else "") +
               f" †: fewer than {found['min_units']} units, shown but not to be read as a verdict: a percentile "
               f"bootstrap over so few units draws too narrow an interval, and the corrected tests have little "
               f"power (*: none can reach significance). Position 1 is the first.")
    return "\n".join(["<h3>By document length</h3>", html_table(header, body, caption)])


def _length_cell(summary: Mapping, key: str) -> str:
    """A by-length cell: the reach counted from 1, the drops starred where none can be significant; an empty
    bucket's cells a dash."""
    if not summary:
        return "–"
    if key == "reach":
        return reach_text(summary)
    if key == "significant_drops":
        return f"{summary[key]}" + ("*" if summary.get("underpowered") else "")
    return cell_text(summary.get(key))


def sizing_note(record: Mapping) -> str:
    """What sizing the battery for a drop achieved (`posbias.audit.sizing`); empty when it was not asked for."""
    sizing = record.get("sizing")
    if not sizing:
        return ""
    metric, detectable = html.escape(record["metric"]), number(record["summary"].get("detectable_drop"), 3)
    asked = f"<b>Sized to detect a drop of {sizing['detect']:g} in {metric} at 80% power</b>"
    if sizing["needed"] is None:
        return (f"<p>{asked}: the first run's values did not vary, so there was nothing to size by; "
                f"{sizing['units']} units ran.</p>")
    if sizing["cap_binds"]:
        return (f"<p>{asked}: that needs about {sizing['needed']} units, more than the cap of {sizing['cap']} "
                f"(<code>max_units</code>), so it <b>cannot</b>: with {sizing['units']} units the smallest drop "
                f"found at 80% power is {detectable}. Raise <code>max_units</code> with a larger source, or read "
                f"the curve as a measurement of this size.</p>")
    return (f"<p>{asked}: {sizing['units']} units (a first run of {sizing['first_units']} estimated "
            f"{sizing['needed']}); the smallest drop found at 80% power with them is {detectable}.</p>")


def summary_rows(record: Mapping, curve: pd.DataFrame) -> list[list[str]]:
    """The short summary under a battery's figure, in words: the first and the worst position with their intervals,
    chance, the drops, the reach, the power and PSI. The full metric suite follows under Details."""
    summary, metric = record["summary"], record["metric"]
    curve = curve.sort_values("position").reset_index(drop=True)
    first, worst = curve.iloc[0], curve.loc[curve["mean"].idxmin()]
    declared = DECLARED[record["battery"]]

    def with_interval(row) -> str:
        return f"{number(row['mean'])} [{number(row['ci_low'])}, {number(row['ci_high'])}]"

    rows = [[f"{metric} at the first position", with_interval(first)],
            [f"{metric} at the worst position", f"{with_interval(worst)} at {position_label(worst, curve)}"]]
    chance = record.get("extra", {}).get("chance")
    if isinstance(chance, (int, float)) and math.isfinite(chance) and chance > 0:
        rows.append([f"{metric} by chance", number(chance)])
    drops = f"{summary['significant_drops']} of {len(curve) - 1} later positions"
    rows.append(["significantly below the first", drops + (" (too few units for any test to reach significance)"
                                                         if summary.get("underpowered") and
                                                         not summary["significant_drops"] else "")])
    reach_row = curve.loc[curve["position"] == summary["reach"]].iloc[0]
    window = record.get("model", {}).get("window")
    reach = ("every position (nothing dropped)" if summary.get("reach_censored")
             else f"up to {position_label(reach_row, curve)}")
    if isinstance(summary.get("reach_tokens"), float) and math.isfinite(summary["reach_tokens"]) and window:
        reach += f" (the needle ends at token {round(summary['reach_tokens'])} of a {window}-token window)"
    rows.append(["read as well as the first", reach])
    detectable = summary.get("detectable_drop")
    rows.append(["smallest drop found with 80% power", number(detectable) if isinstance(detectable, float) and
                 math.isfinite(detectable) else "none computable"])
    for key, label in (("psi", "PSI (1 - worst/best)"), ("psi_above_chance", "PSI above chance")):
        if isinstance(summary.get(key), float) and math.isfinite(summary[key]):
            rows.append([label, number(summary[key])])
    rows.append(["units", f"{int(curve['n'].min())} {declared.unit_noun}"])
    return rows


def _battery_section(record: Mapping, curve: pd.DataFrame) -> str:
    """A battery: its heading, figure, short summary in words, then the details (the whole metric suite, the curve
    position by position, the battery's own numbers)."""
    if "lengths" in record["summary"]:
        return _grid_section(record, curve)
    summary = record["summary"]
    title = DECLARED[record["battery"]].title.format(**record.get("extra", {}))
    stats = record["settings"]["statistics"]
    intervals = (f"Brackets: {stats['confidence']:.0%} percentile bootstrap intervals over units; drops are paired "
                 f"tests against the first position ({TESTS.get(record['test'], record['test'])}, "
                 f"{corrected(stats['correction'])} over the curve, alpha "
                 f"{stats['alpha']}).")
    parts = [f"<h2>{html.escape(title)}</h2>", curve_figure(curve, record),
             html_table(["summary", ""], summary_rows(record, curve), intervals).replace("<table>",
                                                                                        '<table class="summary">', 1),
             sizing_note(record), length_table(record), '<div class="details">', "<h3>Details</h3>"]
    shown = {**summary, "reach": reach_text(summary)}
    rows = [[label, cell_text(shown.get(key), 0 if key in TOKEN_FIELDS else 3)] for key, label in SUMMARY_FIELDS
            if key in summary]
    caption = f"The whole metric suite on the {record['metric']} curve, the first position the reference."
    parts.append(html_table(["metric suite", "value"], rows, caption))
    columns = [c for c in ("position", "tokens", "n", "mean", "ci_low", "ci_high", "relative", "p_adjusted", "drop")
               if c in curve]
    body = [[str(int(row[c]) + 1) if c == "position" else cell_text(bool(row[c]) if c == "drop" else row[c],
                                                                  0 if c in TOKEN_FIELDS else 3)
             for c in columns] for _, row in curve.iterrows()]
    parts.append(html_table(columns, body, f"The {record['metric']} curve, position by position (1 = first)."))
    first_last = record.get("extra", {}).get("first_last")
    if first_last:
        parts.append(html_table(["first vs last", "value"], [[k, cell_text(v)] for k, v in first_last.items()],
                                "The evidence sentence first or last in the same document: paired t-test over "
                                "pairs (positive t: first preferred), and the share of pairs preferring first."))
    judged = record.get("extra", {}).get("judge_metrics")
    if judged:
        parts.append(judge_table(judged))
    extra = {k: v for k, v in record.get("extra", {}).items() if k not in ("first_last", "judge_metrics")}
    if extra:
        parts.append(html_table(["battery details", "value"], [[k, cell_text(v)] for k, v in extra.items()], ""))
    parts.append("</div>")
    return "\n".join(parts)


def judge_table(judged: Mapping) -> str:
    """Shi et al.'s metrics of a judge (`posbias.judges.metrics`), as the judge battery measured them before any
    combination of its orders."""
    def interval(key: str) -> str:
        low, high = judged.get(f"{key}_interval") or (None, None)
        return f"{cell_text(judged[key])} [{cell_text(low)}, {cell_text(high)}]" if low is not None else cell_text(
            judged[key])

    pairs = judged["pairs"]
    rows = [["position consistency (PC)", interval("position_consistency")],
            ["preference fairness (PF; + recency, - primacy)", interval("preference_fairness")],
            ["order kappa (Cohen's, subject-first vs subject-second)", cell_text(judged["order_kappa"])],
            ["repetition stability (RS)", cell_text(judged["repetition_stability"]) if judged["repetition_stability"]
             is not None else "not measured (one asking each)"],
            ["choice pairs: consistent / primacy / recency / other / unread",
             " / ".join(str(pairs[key]) for key in ("consistent", "primacy", "recency", "undirected", "unread"))],
            ["questions, comparisons, judgments", f"{judged['n_questions']}, {judged['n_pairs']}, "
                                                  f"{judged['n_judgments']}"]]
    caption = (f"The judge's position bias as Shi et al. measure it (arXiv 2406.07791), each order's verdict as "
               f"given; brackets: {judged['interval']['confidence']:.0%} percentile bootstrap intervals over "
               f"questions, resampled whole.")
    return html_table(["judge metric", "value"], rows, caption)


def source_label(record: Mapping) -> str:
    """What data a battery read: the embedded synthetic world, or the directory of its `source` files."""
    source = record["settings"][record["battery"]].get("source")
    if not source:
        return "embedded synthetic world"
    from posbias.audit.battery_settings import source_files

    files = source_files(source)
    return Path(files[0]).parent.name if files else json.dumps(source, sort_keys=True)


def beside(found: Mapping[str, Sequence[Mapping]], name: str) -> dict[str, list[Mapping]]:
    """The other audits of the same model (the same spec, no mitigation) by name: the card sets their curves of a
    battery beside this one's, so the embedded world's and a real corpus's read side by side."""
    own = found[name][0]
    if own.get("mitigation"):
        return {}
    return {other: list(records) for other, records in found.items()
            if other != name and records[0]["spec"] == own["spec"] and not records[0].get("mitigation")}


def side_by_side(out: str | Path, name: str, record: Mapping, others: Mapping[str, Sequence[Mapping]]) -> str:
    """The battery's curve beside the same battery's curves from the model's other audits (`beside`), each labelled
    by its data, on relative positions (first to last): their documents differ in length. Empty without any."""
    from posbias.reporting.figure_files import plt

    curves = [(name, record)] + [(other, r) for other, records in others.items() for r in records
                                 if r["battery"] == record["battery"] and "lengths" not in r["summary"]]
    if len(curves) < 2 or "lengths" in record["summary"]:
        return ""
    fig, ax = plt.subplots(figsize=(6, 3.2))
    for audit_name, each in curves:
        curve = pd.read_csv(Path(out) / audit_name / f"{each['battery']}.curve.csv")
        x = curve["position"] / max(int(curve["position"].max()), 1)
        ax.plot(x, curve["mean"], marker="o", label=f"{audit_name}: {source_label(each)} ({each['n_units']} units)")
        ax.fill_between(x, curve["ci_low"], curve["ci_high"], alpha=0.15, linewidth=0)
    ax.set_xlabel("relative position (0 = first, 1 = last)")
    ax.set_ylabel(record["metric"])
    ax.legend(fontsize=7, loc="best")
    ax.grid(alpha=0.3)
    rows = [[audit_name, source_label(each), str(each["n_units"]), number(each["summary"]["reference_mean"]),
             number(each["summary"]["psi"]), number(each["summary"].get("psi_above_chance")),
             str(each["summary"]["significant_drops"])] for audit_name, each in curves]
    table = html_table(["audit", "data", "units", "first", "PSI", "PSI above chance", "drops"], rows,
                       "The same model and battery on other data: each curve's own tests and summary.")
    return "\n".join(["<h3>The same battery on other data</h3>",
                      inline_png(fig, f"{record['battery']} on other data", 600), table])


def write_card(out: str | Path, name: str, records: Sequence[Mapping],
               environment: Sequence[Sequence[str]], others: Mapping[str, Sequence[Mapping]] | None = None) -> Path:
    """The model's card from its battery records and curve files; `environment` is the provenance's rows of what
    ran the first battery (`posbias.provenance.manifest.environment_rows`); `others`: the same model's other audits
    (`beside`), whose curves of a battery are set beside this one's."""
    directory = Path(out) / name
    first = records[0]
    curves = {record["battery"]: pd.read_csv(directory / f"{record['battery']}.curve.csv") for record in records}
    head = (f"<h1>Position-sensitivity audit: {html.escape(name)}</h1>"
            f"<p class=\"subtitle\"><code>{html.escape(first['spec'])}</code> ({html.escape(first['kind'])})</p>")
    if first.get("mitigation"):
        from posbias.audit.mitigations import describe

        of = html.escape(first["mitigation"]["of"])
        head += (f"<p>Mitigation: {html.escape(describe(first['mitigation']))}, of "
                 f"<a href=\"../{of}/{CARD}\">{of}</a> (the mitigation table sets the two side by side).</p>")
    head += '<p class="verdict">' + " ".join(f"<b>{html.escape(label)}:</b> {html.escape(text)}"
                                             for label, text in verdicts(records, curves)) + "</p>"
    model_rows = [[str(k), cell_text(v)] for k, v in first["model"].items()]
    sections = [_battery_section(record, curves[record["battery"]]) + side_by_side(out, name, record, others or {})
                for record in records]
    settings = {b: s for record in records for b, s in record["settings"].items()}
    provenance = [["battery seconds", ", ".join(f"{r['battery']} {r['seconds']:.1f}" for r in records)],
                  ["settings", json.dumps(settings, sort_keys=True)], *[[k, v] for k, v in environment]]
    page = html_page(head, *sections, '<div class="details"><h2>The model as loaded</h2>',
                     html_table(["", ""], model_rows, ""), "<h2>Provenance</h2>",
                     html_table(["", ""], provenance, "What ran the batteries (the first battery's environment)."),
                     "</div>", title=f"{name}: position-sensitivity audit")
    path = directory / CARD
    with atomic_write(path) as handle:
        handle.write(page)
    return path
