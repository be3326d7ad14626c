"""A small FarRelevant-style source in the real formats (whitespace tokens), shared by the sweep tests."""

from __future__ import annotations

from pathlib import Path

from posbias.io import write_documents, write_positions, write_qrels, write_queries, write_run

# Non-relevant sentences (a passage each) and one relevant passage per query, as the FarRelevant builder joins them.
FILLER = [f"filler sentence number {word} says nothing useful." for word in
          ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")]
RELEVANT = {"q1": "the capital of arden is brill.", "q2": "the river lune flows through cask."}
LAYOUT = {"q1": (FILLER[0:3], FILLER[3:5]), "q2": (FILLER[5:8], FILLER[8:9])}  # passages before and after


def write_source(root: Path, retrieved: dict[str, bool] | None = None) -> dict:
    """Passages, qrels, FarRelevant documents, positions and a candidate run; returns the paths `build_sweep`
    reads. `retrieved[q]` False leaves q's relevant document out of its candidates."""
    retrieved = retrieved or {}
    passages = {f"P{i:02d}": text for i, text in enumerate(FILLER)}
    passages.update({f"R{q}": text for q, text in RELEVANT.items()})
    write_documents(root / "passages.jsonl", ({"id": k, "text": v} for k, v in passages.items()))
    write_qrels(root / "passage_qrels.txt", {q: {f"R{q}": 1} for q in RELEVANT})
    docs, starts = [], {}
    for q, (before, after) in LAYOUT.items():
        docs.append({"id": f"F{q}", "text": " ".join([*before, RELEVANT[q], *after])})
        starts[q] = len(" ".join(before).split())
    docs += [{"id": f"D{i}", "text": f"distractor {i} about the capital of somewhere else."} for i in range(6)]
    write_documents(root / "docs.jsonl", docs)
    write_queries(root / "queries.tsv", {"q1": "capital of arden", "q2": "which river flows through cask"})
    write_qrels(root / "qrels.txt", {q: {f"F{q}": 1} for q in RELEVANT})
    write_positions(str(root / "positions.tsv"), starts)
    run = {}
    for n, q in enumerate(RELEVANT):
        scores = {f"D{i}": 5.0 - i for i in range(n, n + 4)}
        if retrieved.get(q, True):
            scores[f"F{q}"] = 4.5
        run[q] = scores
    write_run(root / "candidates.run", run, tag="bm25")
    return {"queries": str(root / "queries.tsv"), "qrels": str(root / "qrels.txt"), "docs": str(root / "docs.jsonl"),
            "positions": str(root / "positions.tsv"), "candidates": str(root / "candidates.run"),
            "passages": str(root / "passages.jsonl"), "passage_qrels": str(root / "passage_qrels.txt")}


def outputs(root: Path) -> dict:
    out = root / "sweep"
    return {"docs": str(out / "docs.jsonl"), "queries": str(out / "queries" / "sweep.tsv"),
            "qrels": str(out / "qrels" / "sweep.txt"), "positions": str(out / "positions" / "sweep.tsv"),
            "candidates": str(out / "candidates" / "sweep.run")}
