"""The query table (spec §1.2): one question per Re-DocRED fact, the pool every probe samples from.

A label (head, relation, tail) becomes the question of its relation's template (`templates.tsv`, spec Appendix A)
about the head's longest name. A query is kept only if no other document of the loaded corpus states the same
fact (the duplicate filter, so that the gold document is the only right answer) and the label cites evidence
sentences. Rows come in document order, then label order: the seeded sampling of the probes depends on it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources

from posbias.errors import InputError
from posbias.docred.documents import Document, Label, Mention

# Many-to-many relations that the authors discard (spec §1.2 step 1).
SKIPPED_RELATIONS = ("P150", "P710")

TEMPLATES_FILE = "templates.tsv"
HEAD_FIELD = "{head}"


def load_templates() -> dict[str, str]:
    """Relation id → question template with a `{head}` field, from the `templates.tsv` shipped with the package."""
    source = resources.files(__package__).joinpath(TEMPLATES_FILE)
    templates: dict[str, str] = {}
    for line_number, line in enumerate(source.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{TEMPLATES_FILE}:{line_number}"
        relation, tab, template = line.partition("\t")
        if not tab or HEAD_FIELD not in template:
            raise InputError(f"{where}: expected '<PID><tab><template with {HEAD_FIELD}>', found {line!r}")
        if relation in templates:
            raise InputError(f"{where}: second template for {relation}")
        templates[relation] = template
    return templates


def _first_mentions(mentions: Iterable[Mention]) -> dict[str, tuple[int, int]]:
    """Each name → where it is first mentioned in document order, (sent_id, token start). The file lists an
    entity's mentions in no particular order, so the minimum is taken rather than the first listed."""
    first: dict[str, tuple[int, int]] = {}
    for mention in mentions:
        where = (mention.sent_id, mention.pos[0])
        if mention.name not in first or where < first[mention.name]:
            first[mention.name] = where
    return first


def longest_name(mentions: Iterable[Mention]) -> str:
    """The longest name (in characters) among an entity's mentions; queries always use it.

    Ties go to the name whose first mention comes first in document order (sentence, then token start), and
    then to the lexicographically smaller name. The authors took `max` over a set, so their ties followed
    Python's string hashing (PYTHONHASHSEED); this order is the same in every run.
    """
    first = _first_mentions(mentions)
    if not first:
        raise ValueError("an entity without mentions has no name")
    return min(first, key=lambda name: (-len(name), first[name], name))


def shortest_other_name(mentions: Iterable[Mention], longest: str) -> str | None:
    """The shortest name other than `longest` (the literal-bias probe's short name), or None if the entity has
    no other name. Ties are broken as in `longest_name`: first mention in document order, then lexicographic."""
    first = _first_mentions(mentions)
    first.pop(longest, None)
    if not first:
        return None
    return min(first, key=lambda name: (len(name), first[name], name))


@dataclass(frozen=True)
class ProbeQuery:
    """One row of the query table: a label of a document and its question."""

    qid: str  # f"{doc_id}-{label_index}", e.g. test3-12
    document: Document
    label_index: int  # position of the label in the document's `labels`, skipped relations included
    label: Label
    query: str
    head_longest: str
    tail_longest: str

    @property
    def head(self) -> tuple[Mention, ...]:
        return self.document.entities[self.label.head]

    @property
    def tail(self) -> tuple[Mention, ...]:
        return self.document.entities[self.label.tail]

    @property
    def head_names(self) -> frozenset[str]:
        return frozenset(mention.name for mention in self.head)

    @property
    def tail_names(self) -> frozenset[str]:
        return frozenset(mention.name for mention in self.tail)

    @property
    def evidence(self) -> tuple[int, ...]:
        return self.label.evidence

    @property
    def head_in_evidence(self) -> tuple[Mention, ...]:
        """Head mentions in an evidence sentence, in the entity's (file) order."""
        return tuple(mention for mention in self.head if mention.sent_id in self.evidence)

    @property
    def tail_in_evidence(self) -> tuple[Mention, ...]:
        return tuple(mention for mention in self.tail if mention.sent_id in self.evidence)


@dataclass(frozen=True)
class QueryTableCounts:
    """What happened to the labels of the query documents; the last five add up to `labels`."""

    labels: int
    skipped_relations: int  # P150, P710
    no_template: int  # a relation missing from templates.tsv
    duplicates: int  # another document states the same fact
    no_evidence: int
    kept: int

    def summary(self) -> str:
        return (f"{self.labels} labels: {self.skipped_relations} skipped relations ({', '.join(SKIPPED_RELATIONS)}),"
                f" {self.no_template} without a template, {self.duplicates} stated in another document,"
                f" {self.no_evidence} without evidence; {self.kept} queries kept")


class _FactIndex:
    """Which document titles state a (head name, relation) or a pair of names, over every name variant.

    Pairs are stored in both orders, so that a fact stated the other way round (e.g. "B has part A" for
    "A is part of B") also counts. As in the authors' code, skipped relations are not indexed, labels without
    evidence are, and documents are told apart by title.
    """

    def __init__(self, documents: Iterable[Document]) -> None:
        self.head_relation: defaultdict[tuple[str, str], set[str]] = defaultdict(set)
        self.name_pair: defaultdict[tuple[str, str], set[str]] = defaultdict(set)
        for document in documents:
            for label in document.labels:
                if label.relation in SKIPPED_RELATIONS:
                    continue
                tail_names = {mention.name for mention in document.entities[label.tail]}
                for head_name in {mention.name for mention in document.entities[label.head]}:
                    self.head_relation[head_name, label.relation].add(document.title)
                    for tail_name in tail_names:
                        self.name_pair[head_name, tail_name].add(document.title)
                        self.name_pair[tail_name, head_name].add(document.title)

    def other_titles(self, document: Document, label: Label) -> set[str]:
        """Titles, other than the document's own, that state the label's fact."""
        titles: set[str] = set()
        tail_names = {mention.name for mention in document.entities[label.tail]}
        for head_name in {mention.name for mention in document.entities[label.head]}:
            titles.update(self.head_relation.get((head_name, label.relation), ()))
            for tail_name in tail_names:
                titles.update(self.name_pair.get((head_name, tail_name), ()))
        titles.discard(document.title)
        return titles


def query_table_with_counts(documents: Sequence[Document], dedup_documents: Sequence[Document] = ()
                            ) -> tuple[list[ProbeQuery], QueryTableCounts]:
    """The query table of `documents` (spec §1.2) and what was dropped on the way.

    `dedup_documents` (e.g. Re-DocRED train and DocRED train_distant) only widen the duplicate filter; they
    never yield queries. Without them the pool is larger than the authors' (spec §1.2, "Consequence").
    """
    templates = load_templates()
    index = _FactIndex([*documents, *dedup_documents])
    rows: list[ProbeQuery] = []
    labels = skipped = no_template = duplicates = no_evidence = 0
    for document in documents:
        for label_index, label in enumerate(document.labels):
            labels += 1
            if label.relation in SKIPPED_RELATIONS:
                skipped += 1
                continue
            template = templates.get(label.relation)
            if template is None:
                no_template += 1
                continue
            if index.other_titles(document, label):
                duplicates += 1
                continue
            if not label.evidence:
                no_evidence += 1
                continue
            head_longest = _entity_longest_name(document, label_index, label.head)
            rows.append(ProbeQuery(
                qid=f"{document.doc_id}-{label_index}", document=document, label_index=label_index, label=label,
                query=template.replace(HEAD_FIELD, head_longest), head_longest=head_longest,
                tail_longest=_entity_longest_name(document, label_index, label.tail)))
    counts = QueryTableCounts(labels=labels, skipped_relations=skipped, no_template=no_template,
                              duplicates=duplicates, no_evidence=no_evidence, kept=len(rows))
    return rows, counts


def build_query_table(documents: Sequence[Document], dedup_documents: Sequence[Document] = ()) -> list[ProbeQuery]:
    """The query table of `documents`; see `query_table_with_counts`."""
    return query_table_with_counts(documents, dedup_documents)[0]


def _entity_longest_name(document: Document, label_index: int, entity_index: int) -> str:
    mentions = document.entities[entity_index]
    if not mentions:
        raise InputError(f"document {document.doc_id} ({document.title!r}): label {label_index} names entity "
                         f"{entity_index}, which has no mentions")
    return longest_name(mentions)
