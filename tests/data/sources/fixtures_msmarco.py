"""Tiny MS MARCO collections in the layout ir_datasets 0.6.3 keeps under `IR_DATASETS_HOME`.

Each writer replaces one dataset's directory (`<home>/msmarco-document`, ...) with the files a download
leaves there: the names, compression and inner layout come from `ir_datasets/etc/downloads.json`
(`cache_path`) and the dataset modules. ir_datasets uses a file that is already in place without checking
its hash, so nothing is downloaded. Files ir_datasets derives on first use (extracted tar members) are
removed with the directory, so rewriting a fixture always takes effect.

Each writer returns what `posbias.data.sources.irds` should read back:
`{"docs": {doc_id: text}, "queries": {dataset_id: {qid: text}}, "qrels": {dataset_id: {qid: {doc_id: grade}}},
"files": {name: Path}}`. Texts are written out by hand (title and body joined, whitespace collapsed).
"""

from __future__ import annotations

import gzip
import io
import json
import shutil
import tarfile
from pathlib import Path

# ---------------------------------------------------------------------------------------------------------
# writing helpers (also used by tests that corrupt a file)


def write_gzip(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(text.encode("utf-8"), mtime=0))
    return path


def write_text(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))  # bytes: no newline translation
    return path


def write_tar(path: Path, members: dict[str, bytes], compression: str = "") -> Path:
    """A tar archive (`compression` "" or "gz") holding `members` in the given order."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, f"w:{compression}") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def _fresh(home: Path, name: str) -> Path:
    """The dataset's directory, emptied: stale extracts or docstores would shadow the new files."""
    base = Path(home) / name
    shutil.rmtree(base, ignore_errors=True)
    base.mkdir(parents=True)
    return base


def _lines(rows) -> str:
    return "".join("\t".join(row) + "\n" for row in rows)


def _trec_qrels(rows) -> str:
    """TREC qrels lines `qid iteration doc_id grade`."""
    return "".join(f"{qid} {it} {did} {grade}\n" for qid, it, did, grade in rows)


def _qrels_dict(rows) -> dict[str, dict[str, int]]:
    result: dict[str, dict[str, int]] = {}
    for qid, _, did, grade in rows:
        result.setdefault(qid, {})[did] = grade
    return result


# ---------------------------------------------------------------------------------------------------------
# msmarco-document (v1): TREC-formatted documents in collection.tsv.gz, gzipped TSV queries

# (doc_id, url, title, body lines, expected text)
DOCUMENT_V1_DOCS = [
    ("D1555982", "https://en.wikipedia.org/wiki/Rose", "Rose - Wikipedia",
     ["A rose is a woody perennial flowering plant of the genus Rosa.", "",
      "There are over three hundred species and tens of thousands of cultivars."],
     "Rose - Wikipedia A rose is a woody perennial flowering plant of the genus Rosa. "
     "There are over three hundred species and tens of thousands of cultivars."),
    ("D301595", "http://example.com/tea", "Tea", ["Tea is an aromatic beverage  prepared from cured leaves."],
     "Tea Tea is an aromatic beverage prepared from cured leaves."),
    ("D59219", "http://example.com/untitled", "", ["A page without a title."], "A page without a title."),
    ("D1035833", "http://example.com/cafe", "Café culture",
     ["Cafés in Vienna serve coffee with a glass of water."],
     "Café culture Cafés in Vienna serve coffee with a glass of water."),
]


def _trec_document(doc_id: str, url: str, title: str, body: list[str]) -> str:
    # ir_datasets reads the lines inside <TEXT> as url, title, then the body
    return "\n".join(["<DOC>", f"<DOCNO>{doc_id}</DOCNO>", "<TEXT>", url, title, *body, "</TEXT>", "</DOC>"]) + "\n"


def write_msmarco_document(home: Path) -> dict:
    base = _fresh(home, "msmarco-document")
    files = {"docs": write_gzip(base / "collection.tsv.gz",  # the name is ir_datasets'; the content is TREC
                                "".join(_trec_document(*doc[:4]) for doc in DOCUMENT_V1_DOCS))}
    queries = {
        "train": [("1185869", "   what is a   rose  "), ("1185868", "how is tea made")],
        "dev": [("174249", "does xpress bet charge to deposit money"), ("320792", "cost of a cafe in vienna")],
        "trec-dl-2019": [("19335", "anthropological definition of environment"), ("47923", "axon terminals"),
                         ("87181", "causes of left ventricular hypertrophy")],
        "trec-dl-2020": [("42255", "average salary for dental hygienist"), ("23849", "are naturalization records"),
                         ("3505", "how do they do open heart surgery")],
    }
    qrels = {
        "train": [("1185869", "0", "D1555982", 1), ("1185868", "0", "D301595", 1)],
        "dev": [("174249", "0", "D59219", 1), ("320792", "0", "D1035833", 1)],
        "trec-dl-2019": [("19335", "Q0", "D1555982", 3), ("19335", "Q0", "D301595", 0), ("47923", "Q0", "D59219", 2),
                         ("47923", "Q0", "D1035833", 1)],
        "trec-dl-2020": [("42255", "Q0", "D301595", 1), ("3505", "Q0", "D1555982", 2), ("3505", "Q0", "D59219", 3)],
    }
    for name in queries:
        files[f"{name}/queries"] = write_gzip(base / name / "queries.tsv.gz", _lines(queries[name]))
        qrels_text = _trec_qrels(qrels[name])
        # the TREC DL judgments are plain text (from trec.nist.gov), the MS MARCO ones gzipped
        files[f"{name}/qrels"] = (write_text(base / name / "qrels", qrels_text) if name.startswith("trec-dl")
                                  else write_gzip(base / name / "qrels.gz", qrels_text))
    return {
        "docs": {doc[0]: doc[4] for doc in DOCUMENT_V1_DOCS},
        "queries": {
            "msmarco-document/train": {"1185869": "what is a rose", "1185868": "how is tea made"},
            "msmarco-document/dev": dict(queries["dev"]),
            "msmarco-document/trec-dl-2019": dict(queries["trec-dl-2019"]),
            "msmarco-document/trec-dl-2019/judged": {"19335": "anthropological definition of environment",
                                                     "47923": "axon terminals"},
            "msmarco-document/trec-dl-2020": dict(queries["trec-dl-2020"]),
            "msmarco-document/trec-dl-2020/judged": {"42255": "average salary for dental hygienist",
                                                     "3505": "how do they do open heart surgery"},
        },
        "qrels": {f"msmarco-document/{name}": _qrels_dict(rows) for name, rows in qrels.items()}
        | {f"msmarco-document/{name}/judged": _qrels_dict(qrels[name]) for name in ("trec-dl-2019", "trec-dl-2020")},
        "files": files,
    }


# ---------------------------------------------------------------------------------------------------------
# msmarco-document-v2: an uncompressed tar of gzipped JSON-lines shards

# (shard, url, title, headings, body, expected text); doc ids come from shard and byte offset, as in the real data
DOCUMENT_V2_DOCS = [
    ("00", "https://en.wikipedia.org/wiki/Rose", "Rose - Wikipedia", "Rose\nDescription\n",
     "A rose is a woody perennial flowering plant.\nRoses are grown for their flowers.",
     "Rose - Wikipedia Rose Description A rose is a woody perennial flowering plant. "
     "Roses are grown for their flowers."),
    ("00", "http://example.com/tea", "Tea", "", "Tea is an aromatic beverage.", "Tea Tea is an aromatic beverage."),
    ("01", "http://example.com/cafe", "Café", "History", "The first café in Vienna opened in 1685.",
     "Café History The first café in Vienna opened in 1685."),
]


def _v2_shards() -> tuple[dict[str, list[str]], list[str]]:
    """JSON lines per shard, and the doc ids in reading order."""
    shards: dict[str, list[str]] = {}
    offsets: dict[str, int] = {}
    doc_ids = []
    for shard, url, title, headings, body, _ in DOCUMENT_V2_DOCS:
        doc_id = f"msmarco_doc_{shard}_{offsets.get(shard, 0)}"
        line = json.dumps({"url": url, "title": title, "headings": headings, "body": body, "docid": doc_id}) + "\n"
        offsets[shard] = offsets.get(shard, 0) + len(line.encode("utf-8"))
        shards.setdefault(shard, []).append(line)
        doc_ids.append(doc_id)
    return shards, doc_ids


def write_v2_docs(path: Path, shards: dict[str, list[str]]) -> Path:
    """`msmarco_v2_doc.tar`: one `msmarco_v2_doc/msmarco_doc_NN.gz` member per shard."""
    members = {f"msmarco_v2_doc/msmarco_doc_{shard}.gz": gzip.compress("".join(lines).encode("utf-8"), mtime=0)
               for shard, lines in shards.items()}
    return write_tar(path, members)


def write_msmarco_document_v2(home: Path) -> dict:
    base = _fresh(home, "msmarco-document-v2")
    shards, doc_ids = _v2_shards()
    queries = [("787021", "what is a rose  "), ("1129560", "how to brew  tea"), ("2082", "vienna cafe history")]
    qrels = [("787021", "Q0", doc_ids[0], 3), ("787021", "Q0", doc_ids[1], 0), ("2082", "Q0", doc_ids[2], 2)]
    files = {
        "docs": write_v2_docs(base / "msmarco_v2_doc.tar", shards),
        "trec-dl-2021/queries": write_text(base / "trec-dl-2021" / "queries.tsv", _lines(queries)),
        "trec-dl-2021/qrels": write_text(base / "trec-dl-2021" / "qrels", _trec_qrels(qrels)),
    }
    all_queries = {"787021": "what is a rose", "1129560": "how to brew tea", "2082": "vienna cafe history"}
    return {
        "docs": dict(zip(doc_ids, (doc[5] for doc in DOCUMENT_V2_DOCS))),
        "queries": {"msmarco-document-v2/trec-dl-2021": all_queries,
                    "msmarco-document-v2/trec-dl-2021/judged": {q: all_queries[q] for q in ("787021", "2082")}},
        "qrels": {"msmarco-document-v2/trec-dl-2021": _qrels_dict(qrels),
                  "msmarco-document-v2/trec-dl-2021/judged": _qrels_dict(qrels)},
        "files": files,
    }


# ---------------------------------------------------------------------------------------------------------
# msmarco-passage: the collectionandqueries.tar.gz and queries.tar.gz downloads, plain TSV qrels

PASSAGES = [
    ("0", "The presence of communication amid scientific minds was equally important."),
    ("1", "Roses  are woody perennials of the genus Rosa."),
    # mis-encoded UTF-8, as in the real collection: ir_datasets repairs it
    ("2", "The cafÃ© opened in 1685."),
    ("3", "Green tea is made from unoxidized leaves."),
]
PASSAGE_TEXTS = {"0": "The presence of communication amid scientific minds was equally important.",
                 "1": "Roses are woody perennials of the genus Rosa.", "2": "The café opened in 1685.",
                 "3": "Green tea is made from unoxidized leaves."}


def write_passage_collection(path: Path, collection_tsv: str, dev_small_queries: str, dev_small_qrels: str) -> Path:
    """`collectionandqueries.tar.gz` with the members ir_datasets extracts from it."""
    return write_tar(path, {"collection.tsv": collection_tsv.encode("utf-8"),
                            "qrels.dev.small.tsv": dev_small_qrels.encode("utf-8"),
                            "queries.dev.small.tsv": dev_small_queries.encode("utf-8")}, "gz")


def write_msmarco_passage(home: Path) -> dict:
    base = _fresh(home, "msmarco-passage")
    dev_small = [("1048585", "what is a  rose"), ("2", "cafe opening year")]
    dev_qrels = [("1048585", "0", "1", 1), ("2", "0", "2", 1)]
    train = [("121352", "define extreme"), ("634306", "what does tea  come from"), ("920825", "unjudged query")]
    train_qrels = [("121352", "0", "0", 1), ("634306", "0", "3", 1)]

    def tsv_qrels(rows):  # MS MARCO passage qrels are tab-separated
        return _lines((qid, it, did, str(grade)) for qid, it, did, grade in rows)

    files = {
        "collectionandqueries": write_passage_collection(base / "collectionandqueries.tar.gz", _lines(PASSAGES),
                                                         _lines(dev_small), tsv_qrels(dev_qrels)),
        "queries": write_tar(base / "queries.tar.gz", {"queries.train.tsv": _lines(train).encode("utf-8")}, "gz"),
        "train/qrels": write_text(base / "train" / "qrels", tsv_qrels(train_qrels)),
        # where ir_datasets extracts the collection to on first use
        "docs": base / "collection.tsv",
    }
    return {
        "docs": dict(PASSAGE_TEXTS),
        "queries": {"msmarco-passage/dev/small": {"1048585": "what is a rose", "2": "cafe opening year"},
                    "msmarco-passage/train": {"121352": "define extreme", "634306": "what does tea come from",
                                              "920825": "unjudged query"},
                    "msmarco-passage/train/judged": {"121352": "define extreme", "634306": "what does tea come from"}},
        "qrels": {"msmarco-passage/dev/small": _qrels_dict(dev_qrels),
                  "msmarco-passage/train": _qrels_dict(train_qrels),
                  "msmarco-passage/train/judged": _qrels_dict(train_qrels)},
        "files": files,
    }
