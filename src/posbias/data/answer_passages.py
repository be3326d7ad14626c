"""The embedded generator's answering passages (the sparse path's relevant passages there) and the known
offsets they sit at, against which the estimated positions are compared.

Files, under results/data/synthetic/passages/:
- `docs.jsonl`: one answering passage per line, `{"id": "<qid>-a<k>", "text"}`;
- `qrels/{queryset}.txt`: each query's answering passages (grade 1);
- `positions/{queryset}.tsv`: `qid, doc_id, passage_id, start` (the passage's token offset in that judged
  document, in the generator's tokenizer: the truth).
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Mapping, Sequence

from posbias.errors import InputError
from posbias.io import atomic_write, write_documents, write_qrels

TRUTH_COLUMNS = ("qid", "doc_id", "passage_id", "start")


def write_answer_passages(out_dir: str | Path, answer_passages: Mapping[str, Mapping[str, Sequence[Mapping]]]) -> None:
    out = Path(out_dir)
    documents, truth = [], {}
    for queryset, per_query in answer_passages.items():
        qrels, rows = {}, []
        for qid, spans in per_query.items():
            for k, span in enumerate(spans):
                pid = f"{qid}-a{k}"
                documents.append({"id": pid, "text": span["text"]})
                qrels.setdefault(qid, {})[pid] = 1
                rows.append((qid, span["doc_id"], pid, span["start"]))
        write_qrels(out / "qrels" / f"{queryset}.txt", qrels)
        truth[queryset] = rows
    for queryset, rows in truth.items():
        path = out / "positions" / f"{queryset}.tsv"
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_write(path) as handle:
            handle.write("\t".join(TRUTH_COLUMNS) + "\n")
            handle.writelines("\t".join(map(str, row)) + "\n" for row in rows)
    write_documents(out / "docs.jsonl", documents)


def read_truth(path: str | Path):
    """The truth file as a DataFrame; a file without the columns is an `InputError` naming it."""
    import pandas as pd

    with open(path, encoding="utf-8", newline="") as handle:
        header = next(csv.reader(handle, delimiter="\t"), [])
    if tuple(header[:4]) != TRUTH_COLUMNS:
        raise InputError(f"{path}: a truth file starts with the header {' '.join(TRUTH_COLUMNS)}, got {header}")
    return pd.read_csv(path, sep="\t", dtype={"qid": str, "doc_id": str, "passage_id": str, "start": int})


def agreement(rows, truth, bin_tokens: int, label: str):
    """The estimated positions of the truth's (query, document) pairs against the truth (the earliest
    answering passage per pair): how many were located, the share whose bin agrees exactly (of the located
    ones) and the mean absolute error in tokens. For the dense path the estimate is the first relevant chunk:
    its index is the bin, its first token the position."""
    import pandas as pd

    first = truth.groupby(["qid", "doc_id"], as_index=False)["start"].min()
    joined = first.merge(rows[["qid", "doc_id", "position", "position_bin"]], on=["qid", "doc_id"], how="left")
    located = joined[joined["position_bin"].fillna(-1) >= 0]
    # located documents the truth does not list: in the embedded world no other document states the answer, so
    # these are false matches (a sibling fact in the same template passes the subsequence threshold)
    known = set(zip(first["qid"], first["doc_id"]))
    others = sum((q, d) not in known for q, d, b in zip(rows["qid"], rows["doc_id"], rows["position_bin"]) if b >= 0)
    truth_bins = located["start"] // bin_tokens
    errors = (located["position"] - located["start"]).abs()
    return pd.DataFrame([{
        "set": label, "truth_pairs": len(first), "estimated_pairs": int(joined["position_bin"].notna().sum()),
        "located": len(located), "located_share": len(located) / len(first) if len(first) else float("nan"),
        "bin_agreement": float((located["position_bin"] == truth_bins).mean()) if len(located) else float("nan"),
        "mean_abs_token_error": float(errors.mean()) if len(located) else float("nan"),
        "exact_position_share": float((errors == 0).mean()) if len(located) else float("nan"),
        "other_documents_located": others}])
