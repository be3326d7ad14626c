"""Re-DocRED documents (the released `dev_revised.json`, `test_revised.json`, ...; spec §1.1) as typed records.

A file is a JSON list of documents with `title`, `sents` (sentences as lists of word tokens), `vertexSet`
(entities, each a list of mentions with `name`, `pos` = [start, end) token offsets in its sentence, `sent_id`
and `type`) and `labels` (`r`, a Wikidata property id; `h` and `t`, entity indexes; `evidence`, sentence ids).
Text keeps Re-DocRED's tokenisation: a sentence is its tokens joined by single spaces, a document its
sentences joined the same way (spec §1.3).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from posbias.errors import InputError
from posbias.io import open_text


@dataclass(frozen=True)
class Mention:
    name: str
    sent_id: int
    pos: tuple[int, int]  # [start, end) token offsets within sentence `sent_id`
    type: str  # PER, ORG, LOC, TIME, NUM or MISC


@dataclass(frozen=True)
class Label:
    relation: str  # Wikidata property id, e.g. P17
    head: int  # index into Document.entities
    tail: int
    evidence: tuple[int, ...]  # sentence ids, as the file lists them


@dataclass(frozen=True)
class Document:
    doc_id: str  # `<split><index>`, e.g. test0, validation12 (the authors' ids)
    title: str
    sents: tuple[tuple[str, ...], ...]
    entities: tuple[tuple[Mention, ...], ...]  # mentions in the file's order, which is not sentence order
    labels: tuple[Label, ...]

    def sentence(self, sent_id: int) -> str:
        return " ".join(self.sents[sent_id])

    @property
    def sentences(self) -> list[str]:
        return [" ".join(tokens) for tokens in self.sents]

    @property
    def text(self) -> str:
        return " ".join(self.sentences)


def read_redocred(path: str | Path, split: str) -> list[Document]:
    """The documents of one Re-DocRED file; `split` names them (`test` → test0, test1, ...). A malformed file
    is an InputError naming the file, the document and the field."""
    path = Path(path)
    try:
        with open_text(path) as handle:  # .gz, .bz2 and .xz as every other reader
            records = json.load(handle)
    except json.JSONDecodeError as err:
        raise InputError(f"{path}:{err.lineno}: not JSON ({err.msg})") from None
    except (OSError, EOFError, UnicodeDecodeError) as err:  # a damaged or mislabelled compressed file
        raise InputError(f"{path}: cannot be read ({err})") from None
    if not isinstance(records, list):
        raise InputError(f"{path}: expected a JSON list of documents, found {type(records).__name__}")
    return documents_from_records(records, split, path)


def documents_from_records(records: list, split: str, path: str | Path) -> list[Document]:
    """The documents of Re-DocRED records already read (the synthetic world's, or a file's); `path` names them in
    errors."""
    return [_document(record, split, index, Path(path)) for index, record in enumerate(records)]


def _document(record, split: str, index: int, path: Path) -> Document:
    where = f"{path}: document {index}"
    try:
        sents = tuple(tuple(str(token) for token in sentence) for sentence in record["sents"])
        entities = tuple(
            tuple(Mention(name=str(m["name"]), sent_id=int(m["sent_id"]), pos=(int(m["pos"][0]), int(m["pos"][1])),
                          type=str(m["type"])) for m in entity)
            for entity in record["vertexSet"])
        labels = tuple(Label(relation=str(lab["r"]), head=int(lab["h"]), tail=int(lab["t"]),
                             evidence=tuple(int(i) for i in lab.get("evidence", ())))
                       for lab in record.get("labels", ()))
        title = str(record["title"])
    except KeyError as err:
        raise InputError(f"{where}: missing field {err.args[0]!r}") from None
    except (TypeError, ValueError, IndexError) as err:
        raise InputError(f"{where}: malformed ({err})") from None
    for label in labels:
        for entity_index in (label.head, label.tail):
            if not 0 <= entity_index < len(entities):
                raise InputError(f"{where}: label {label.relation} names entity {entity_index} of {len(entities)}")
        for sent_id in label.evidence:
            if not 0 <= sent_id < len(sents):
                raise InputError(f"{where}: label {label.relation} cites sentence {sent_id} of {len(sents)}")
    for entity in entities:
        for mention in entity:
            if not 0 <= mention.sent_id < len(sents):
                raise InputError(f"{where}: mention {mention.name!r} in sentence {mention.sent_id} of {len(sents)}")
            start, end = mention.pos
            if not 0 <= start < end <= len(sents[mention.sent_id]):
                raise InputError(f"{where}: mention {mention.name!r} spans tokens [{start}, {end}) of sentence "
                                 f"{mention.sent_id}, which has {len(sents[mention.sent_id])}")
    return Document(doc_id=f"{split}{index}", title=title, sents=sents, entities=entities, labels=labels)
