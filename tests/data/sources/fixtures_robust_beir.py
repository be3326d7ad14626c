"""Tiny copies of TREC Robust04 (disks45/nocr/trec-robust-2004) and BEIR NQ in ir_datasets' own cache layout.

Each writer puts files where ir_datasets 0.6.3 looks for them under IR_DATASETS_HOME, so it reads them
instead of downloading (a file that is already present is used as is: its MD5 is not checked), and returns
what `posbias.data.sources.irds` should read back.
"""

from __future__ import annotations

import gzip
import json
import shutil
import zipfile
from pathlib import Path

ROBUST04 = "disks45/nocr/trec-robust-2004"
ROBUST04_FOLDS = [f"{ROBUST04}/fold{n}" for n in range(1, 6)]
BEIR_NQ = "beir/nq"

# ir_datasets insists that exactly this many files match its four corpus globs (the size of the real
# collection), and raises after the last document otherwise; the fixture pads with empty files.
DISKS45_FILE_COUNT = 2295

# (file under the corpus directory, doc id, title, body): one or more files per source of disks 4 & 5
# without the Congressional Record, named as on the discs. The markup follows each source's own SGML;
# ir_datasets takes <DATE> as body text, so FT and LA Times bodies start with their date.
ROBUST04_DOCS = [
    ("NEWS_data/FBIS/FB396001", "FBIS3-1", "Rocket puts weather satellite into orbit",
     "The launch of the rocket carried a weather satellite into a stable orbit on Monday."),
    ("NEWS_data/FBIS/FB396001", "FBIS3-2", "Wind turbines to supply coastal towns",
     "A new farm of wind turbines will produce power for three coastal towns next year."),
    ("NEWS_data/FR94/01/FR940104.0", "FR940104-0-00001", "",
     "The agency amends its rules on flood insurance for homes damaged when a river floods."),
    ("NEWS_data/FR94/01/FR940104.0", "FR940104-0-00002", "",
     "Pipeline safety regulations: operators of gas pipeline systems must inspect welds yearly."),
    ("NEWS_data/FT/FT911/FT911_1", "FT911-1", "Contigas plans gas pipeline in east Germany",
     "910514 The German gas group plans a pipeline to bring natural gas to towns in east Germany."),
    ("NEWS_data/FT/FT911/FT911_1", "FT911-2", "Coffee export prices fall again",
     "910514 Coffee prices fell as exporters in Brazil and Colombia sold more coffee abroad."),
    ("NEWS_data/FT/FT911/FT911_1", "FT911-3", "Shares close higher in London",
     "910514 The stock market closed higher as bank shares recovered."),
    ("NEWS_data/LATIMES/LA010189", "LA010189-0001", "River flood damage tops estimates",
     "January 1, 1989 The river flood caused damage to hundreds of homes along the valley."),
    ("NEWS_data/LATIMES/LA010189", "LA010189-0002", "New coffee shop opens downtown",
     "January 1, 1989 A coffee shop opened downtown, selling coffee from small farms."),
    ("NEWS_data/LATIMES/LA010189", "LA010189-0003", "Wind power gains in the desert",
     "January 1, 1989 Wind power from desert turbines now lights thousands of homes."),
]

# (topic id, title, description); one topic per Huston & Croft fold, listed in fold order 1..5.
ROBUST04_TOPICS = [
    ("302", "gas pipeline Germany", "Find reports on natural gas pipeline projects in Germany."),
    ("301", "wind power turbines", "How much power do wind turbines produce for towns?"),
    ("306", "coffee export prices", "What happened to the prices of coffee exports?"),
    ("320", "river flood damage", "Identify damage to homes caused by a river flood."),
    ("304", "satellite rocket launch", "Reports of a rocket launch carrying a satellite."),
]

ROBUST04_QRELS = {
    "302": {"FT911-1": 2, "FR940104-0-00002": 1, "FT911-3": 0},
    "301": {"FBIS3-2": 1, "LA010189-0003": 2},
    "306": {"FT911-2": 1, "LA010189-0002": 0},
    "320": {"LA010189-0001": 2, "FR940104-0-00001": 1},
    "304": {"FBIS3-1": 1},
}


def _robust04_doc(path: str, doc_id: str, title: str, body: str) -> str:
    """One document in the markup of its source; dates and comments are where the real ones put them."""
    if "/FBIS/" in path:
        return (f"<DOC>\n<DOCNO> {doc_id} </DOCNO>\n<HT>  \"cr00000011094001\" </HT>\n<HEADER>\n"
                f"<AU>   FBIS-CHI-94-001 </AU>\nDocument Type:Daily Report\n</HEADER>\n"
                f"<H3> <TI>      {title} </TI></H3>\n<TEXT>\n{body}\n</TEXT>\n</DOC>\n")
    if "/FR94/" in path:
        return (f"<DOC>\n<DOCNO> {doc_id} </DOCNO>\n<PARENT> {doc_id} </PARENT>\n<TEXT>\n"
                f"<!-- PJG FTAG 4700 -->\n{body}\n<!-- PJG /STAG -->\n</TEXT>\n</DOC>\n")
    if "/FT/" in path:
        date, text = body.split(" ", 1)
        return (f"<DOC>\n<DOCNO>{doc_id}</DOCNO>\n<PROFILE>AN-BEOA7AAIFT</PROFILE>\n<DATE>{date}\n</DATE>\n"
                f"<HEADLINE>\n{title}\n</HEADLINE>\n<BYLINE>\nBy A REPORTER\n</BYLINE>\n"
                f"<TEXT>\n{text}\n</TEXT>\n<PUB>The Financial Times\n</PUB>\n</DOC>\n")
    date, text = body[:len("January 1, 1989")], body[len("January 1, 1989 "):]
    return (f"<DOC>\n<DOCNO> {doc_id} </DOCNO>\n<DOCID> 1 </DOCID>\n<DATE>\n<P>\n{date}\n</P>\n</DATE>\n"
            f"<HEADLINE>\n<P>\n{title}\n</P>\n</HEADLINE>\n<TEXT>\n<P>\n{text}\n</P>\n</TEXT>\n</DOC>\n")


def _robust04_topic(qid: str, title: str, description: str) -> str:
    """A topic as in TREC's 04.testset: tagged lines, each field running until the next tag."""
    return (f"<top>\n\n<num> Number: {qid} \n\n<title> {title} \n\n<desc> Description: \n{description}\n\n"
            f"<narr> Narrative: \nA relevant document mentions {title}.\n\n</top>\n\n\n")


def _sync_directory(root: Path, files: dict[Path, str]):
    """Make `root` hold exactly `files`; padding already in place is kept, as rewriting it each time is slow."""
    if root.is_dir():
        for stale in [path for path in root.rglob("*") if path.is_file() and path not in files]:
            stale.unlink()
    for path, text in files.items():
        if text or not path.is_file() or path.stat().st_size:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")


def write_robust04(home: Path) -> dict:
    """Corpus directory, gzipped topics and qrels of Robust04 under `home`/disks45; returns what to expect.

    The corpus is what a user places by hand (`disks45/corpus`, holding e.g. NEWS_data/FBIS, FR94, FT,
    LATIMES); the topics and qrels are where ir_datasets keeps its downloads of them.
    """
    base = Path(home) / "disks45"
    corpus = base / "corpus"
    files: dict[Path, str] = {}
    for path, doc_id, title, body in ROBUST04_DOCS:
        files[corpus / path] = files.get(corpus / path, "") + _robust04_doc(path, doc_id, title, body)
    for number in range(DISKS45_FILE_COUNT - len(files)):
        files[corpus / "NEWS_data/FT/FT944" / f"FT944_{number + 1}"] = ""
    _sync_directory(corpus, files)
    topics = base / "04.testset.gz"
    with gzip.open(topics, "wt", encoding="utf-8") as out:
        out.write("".join(_robust04_topic(*topic) for topic in ROBUST04_TOPICS))
    qrels = base / "qrels.robust2004.txt"
    qrels.write_text("".join(f"{qid} 0 {doc} {grade}\n" for qid, docs in ROBUST04_QRELS.items()
                             for doc, grade in docs.items()), encoding="utf-8")
    # ir_datasets reads the files in sorted path order, and a file's documents in order.
    ordered = sorted(ROBUST04_DOCS, key=lambda doc: doc[0])
    return {
        "docs": {doc_id: f"{title} {body}".strip() for _, doc_id, title, body in ordered},
        "queries": {qid: title for qid, title, _ in ROBUST04_TOPICS},
        "descriptions": {qid: description for qid, _, description in ROBUST04_TOPICS},
        "qrels": ROBUST04_QRELS,
        "folds": {qid: number for number, (qid, _, _) in enumerate(ROBUST04_TOPICS, start=1)},
        "files": {"corpus": corpus, "topics": topics, "qrels": qrels},
    }


# BEIR NQ: ids as in the real collection (doc0.., test0..); every judgment in NQ has grade 1.
BEIR_NQ_DOCS = [
    ("doc0", "Minority interest", "A minority interest or non controlling interest is the share of a subsidiary "
     "not owned by the parent company, shown in equity on the balance sheet."),
    ("doc1", "Balance sheet", "A balance sheet lists the assets, liabilities and equity of a company."),
    ("doc2", "Great Barrier Reef", "The Great Barrier Reef is the largest coral reef system, off Queensland."),
    ("doc3", "Coral bleaching", "Coral bleaching happens when warm water drives algae out of the coral."),
    ("doc4", "Harry Potter", "Harry Potter is a series of seven fantasy novels written by J. K. Rowling."),
    ("doc5", "J. K. Rowling", "Joanne Rowling is a British author, best known for writing the Harry Potter "
     "novels."),
    ("doc6", "Mount Everest", "Mount Everest is the highest mountain on Earth, in the Himalayas."),
    ("doc7", "Tenzing Norgay", "Tenzing Norgay and Edmund Hillary were the first climbers to reach the summit "
     "of Mount Everest, in 1953."),
    ("doc8", "Photosynthesis", "Photosynthesis turns light, water and carbon dioxide into sugar in plants."),
    ("doc9", "Chlorophyll", "Chlorophyll is the green pigment plants use to absorb light."),
]

BEIR_NQ_QUERIES = [
    ("test0", "what is non controlling interest on balance sheet"),
    ("test1", "where is the great barrier reef coral"),
    ("test2", "who wrote the harry potter novels"),
    ("test3", "who were the first climbers to reach the summit of mount everest"),
    ("test4", "how do plants turn light into sugar"),
]

BEIR_NQ_QRELS = {
    "test0": {"doc0": 1, "doc1": 1},
    "test1": {"doc2": 1},
    "test2": {"doc4": 1, "doc5": 1},
    "test3": {"doc7": 1},
    "test4": {"doc8": 1},
}


def beir_nq_members() -> dict[str, str]:
    """The files of BEIR's nq.zip that ir_datasets reads, by their name inside the zip."""
    corpus = "".join(json.dumps({"_id": i, "title": title, "text": text, "metadata": {}}) + "\n"
                     for i, title, text in BEIR_NQ_DOCS)
    queries = "".join(json.dumps({"_id": qid, "text": text, "metadata": {}}) + "\n" for qid, text in BEIR_NQ_QUERIES)
    qrels = "query-id\tcorpus-id\tscore\n" + "".join(f"{qid}\t{doc}\t{grade}\n" for qid, docs in BEIR_NQ_QRELS.items()
                                                    for doc, grade in docs.items())
    return {"nq/corpus.jsonl": corpus, "nq/queries.jsonl": queries, "nq/qrels/test.tsv": qrels}


def write_beir_nq(home: Path, members: dict[str, str] | None = None) -> dict:
    """BEIR's nq.zip as `home`/beir/nq/source.zip (the given members, or the default ones); returns what to expect.

    ir_datasets builds a docstore (docs.pklz4) and copies queries and qrels (queries.json, test.qrels) next to
    the zip on first use and reads those afterwards, so they are removed here to make it read the new zip.
    """
    base = Path(home) / "beir" / "nq"
    for derived in ("docs.pklz4", "queries.json", "test.qrels"):
        path = base / derived
        shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
    base.mkdir(parents=True, exist_ok=True)
    source = base / "source.zip"
    with zipfile.ZipFile(source, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in (members or beir_nq_members()).items():
            archive.writestr(name, text)
    return {
        "docs": {doc_id: f"{title} {text}" for doc_id, title, text in BEIR_NQ_DOCS},
        "queries": dict(BEIR_NQ_QUERIES),
        "qrels": BEIR_NQ_QRELS,
        "files": {"source": source, "queries": base / "queries.json", "qrels": base / "test.qrels"},
    }
