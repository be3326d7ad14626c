"""What a config reads from outside the workflow: every input `posbias stage` fetches or checks, with the config
keys that name it (posbias.staging.steps stages them; docs/cluster.md).

`collect(data)` walks a validated config (`posbias.config.Config.data`): the collections' and query sets'
sources, every pretrained model and tokenizer (the arguments the rankers' declarations mark `pretrained`, the
retrievers' encoders, local language models, the probes' scorers, the audit's models), and the files placed by
hand with the sha256 the config keeps beside them. One input named by several keys is one need; two keys that
want it at two revisions (or with two hashes) are a `ConfigError`: token stores and truncated copies are kept per
tokenizer name, so one results tree reads one version of each (the `revisions` section's check). `select` keeps
the needs of the jobs a target schedules.

Nothing here imports ir_datasets or the hub client: every config load runs `collect`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping

from posbias.config.section import ConfigError
from posbias.staging.hub import is_hub_id

# Kinds of input, as the stage table names them.
IRDS, HUB_MODEL, HUB_DATASET, FILE, PACKAGE, DIRECTORY = (
    "ir_datasets", "hub model", "hub dataset", "file", "package", "directory")

# What a file placed by hand is, by the config key naming it (its last part), for the line saying where it goes.
HINTS = {
    "expansions": "doc2query expansions (JSONL {id, predicted_queries} or TSV, maybe compressed)",
    "qa": "the Lost-in-the-Middle NQ-open retrieval results (github.com/nelson-liu/lost-in-the-middle, qa_data/)",
    "redocred": "a Re-DocRED file (github.com/tonytan48/Re-DocRED, data/)",
}
# The audit sources' files whose battery checks a `<name>_sha256` beside them (the reader's NQ-open file).
CHECKED_SOURCE_FILES = ("qa",)
REDOCRED_HINT = "a Re-DocRED or DocRED file (github.com/tonytan48/Re-DocRED, data/; DocRED's train_distant.json)"
QA_SOURCE_HINT = "the Lost-in-the-Middle QA data (github.com/nelson-liu/lost-in-the-middle, qa_data/)"

# Sections whose inputs no wildcard names: a target needs them when it schedules one of their rules.
SECTION_RULES = {"probes": ("probes_",), "audit": ("audit_",), "litm": ("litm_",), "positions": ("positions_",),
                 "sweep": ("sweep_",), "farrelevant": ("build_farrelevant",), "generator": ("generate_synthetic",),
                 "tables": ("collection_statistics", "queryset_statistics", "dataset_tables")}


@dataclass
class Need:
    kind: str
    name: str  # the dataset id, hub id, path or offline: name
    part: str | None = None  # ir_datasets: docs, queries or qrels
    revision: str | None = None  # a hub id's pinned revision
    revision_key: str | None = None  # the config key pinning it
    sha256: str | None = None  # a file placed by hand (or ir_datasets' part placed by hand): its expected sha256
    sha256_key: str | None = None  # where the config keeps (or would keep) that sha256
    hint: str = ""  # what a file placed by hand is
    used_by: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.name} {self.part}" if self.part else self.name


class _Needs:
    def __init__(self):
        self.found: dict[tuple, Need] = {}

    def add(self, need: Need, key: str) -> None:
        known = self.found.setdefault((need.kind, need.name, need.part), need)
        if known is not need:
            for value, value_key in (("revision", "revision_key"), ("sha256", "sha256_key")):
                mine, theirs = getattr(need, value), getattr(known, value)
                if mine and theirs and mine.lower() != theirs.lower():
                    raise ConfigError(f"{getattr(need, value_key)}: {need.name} at {value} {mine}, but "
                                      f"{getattr(known, value_key)} wants {theirs}; one results tree reads one "
                                      f"version of it")
                if mine and not theirs:  # the first key that pins it
                    setattr(known, value, mine)
                    setattr(known, value_key, getattr(need, value_key))
                elif getattr(known, value_key) is None:  # where a pin would go: the first key that takes one
                    setattr(known, value_key, getattr(need, value_key))
        if key not in known.used_by:
            known.used_by.append(key)

    def model(self, name, key: str, revision: str | None = None, revision_key: str | None = None) -> None:
        """A pretrained model or tokenizer named by `key` (`whitespace` counts words: nothing to stage)."""
        if not isinstance(name, str) or name == "whitespace":
            return
        if name.startswith("offline:"):
            self.add(Need(PACKAGE, name), key)
        elif is_hub_id(name):
            self.add(Need(HUB_MODEL, name, revision=revision, revision_key=revision_key if revision else None), key)
        elif not name.startswith("results/"):  # a directory the workflow writes is no input
            self.add(Need(DIRECTORY, name), key)

    def file(self, path, key: str, sha256: str | None = None, sha256_key: str | None = None,
             hint: str = "") -> None:
        """A file placed by hand; `sha256_key`: where the config may keep its sha256 (the files whose readers check
        one), else None."""
        if isinstance(path, str) and not path.startswith("results/"):
            self.add(Need(FILE, path, sha256=sha256, sha256_key=sha256_key, hint=hint), key)

    def irds(self, dataset_id: str, part: str, key: str, manual_sha256: str | None = None) -> None:
        # only documents are ever placed by hand (TREC Disks 4 and 5): the source's manual_sha256 is theirs
        self.add(Need(IRDS, dataset_id, part=part, sha256=manual_sha256,
                      sha256_key=f"{key}.manual_sha256" if part == "docs" else None), key)

    def hub_dataset(self, name: str, key: str, revision: str | None = None) -> None:
        self.add(Need(HUB_DATASET, name, revision=revision, revision_key=f"{key}.revision" if revision else None),
                 key)

    def source(self, source: Mapping, key: str, parts: Iterable[str]) -> None:
        """A collection's or query set's `source` block (`$defs/source`)."""
        if source["kind"] == "ir_datasets":
            for part in parts:
                self.irds(source["id"], part, key, source.get("manual_sha256") if part == "docs" else None)
        elif source["kind"] == "hf":
            if is_hub_id(source["path"], "dataset"):
                self.hub_dataset(source["path"], key, source.get("revision"))
            for files in (source.get("data_files") or {}).values():
                for path in [files] if isinstance(files, str) else files:
                    self.file(path, f"{key}.data_files")
        else:
            for name in ("path", "queries", "qrels"):
                self.file(source.get(name), f"{key}.{name}")


def collect(data: Mapping) -> list[Need]:
    """Every input of a validated config (see the module's docstring), in the order the config names them."""
    needs = _Needs()
    _data_sources(needs, data)
    _models(needs, data)
    _analysis_stages(needs, data)
    for name, revision in (data.get("revisions") or {}).items():
        needs.model(name, f"revisions.{name}", revision, f"revisions.{name}")
    return list(needs.found.values())


def _data_sources(needs: _Needs, data: Mapping) -> None:
    for name, spec in (data.get("collections") or {}).items():
        key = f"collections.{name}"
        needs.source(spec["documents"], f"{key}.documents", ["docs"])
        if "truncate" in spec:
            needs.model(spec["truncate"]["tokenizer"], f"{key}.truncate.tokenizer")
        if spec.get("expansions"):
            needs.file(spec["expansions"], f"{key}.expansions", spec.get("expansions_sha256"),
                       f"{key}.expansions_sha256", HINTS["expansions"])
    for name, spec in (data.get("querysets") or {}).items():
        key = f"querysets.{name}"
        if "source" in spec:
            needs.source(spec["source"], f"{key}.source", ["queries", "qrels"])
        folds = spec.get("folds")
        for fold in folds if isinstance(folds, list) else []:
            needs.irds(fold, "queries", f"{key}.folds")
        if isinstance(folds, str):
            needs.file(folds, f"{key}.folds")
        needs.file(spec.get("candidates"), f"{key}.candidates")
    far = data.get("farrelevant") or {}
    needs.model(far.get("tokenizer"), "farrelevant.tokenizer")
    source = far.get("source") or {}
    if source.get("kind") == "ir_datasets":
        needs.irds(source["passages"], "docs", "farrelevant.source.passages")
        for split in ("test", "train"):
            for part in ("queries", "qrels") if source.get(split) else ():
                needs.irds(source[split], part, f"farrelevant.source.{split}")
    elif source.get("kind") == "local":
        documents = source.get("documents")
        for path in documents if isinstance(documents, list) else [documents]:
            needs.file(path, "farrelevant.source.documents")
        for split in ("test", "train"):
            for part in ("queries", "qrels"):
                needs.file((source.get(split) or {}).get(part), f"farrelevant.source.{split}.{part}")
        needs.file(source.get("positions"), "farrelevant.source.positions")


def _models(needs: _Needs, data: Mapping) -> None:
    from posbias.llm.spec import LOCAL_BACKENDS
    from posbias.rankers.catalog import BY_NAME
    from posbias.rankers.declarations.base import PIPELINE_ARGUMENTS

    for name, spec in (data.get("models") or {}).items():
        declaration = BY_NAME.get(spec.get("ranker"))
        args = spec.get("args") or {}
        for argument in (*declaration.arguments, *PIPELINE_ARGUMENTS) if declaration else ():
            if argument.pretrained:
                needs.model(args.get(argument.name, argument.default), f"models.{name}.args.{argument.name}")
    for name, spec in (data.get("retrievers") or {}).items():
        needs.model((spec.get("encoder") or {}).get("model"), f"retrievers.{name}.encoder.model")
    for name, spec in ((data.get("llm") or {}).get("models") or {}).items():
        if spec.get("backend") in LOCAL_BACKENDS:
            key = f"llm.models.{name}"
            needs.model(spec["model"], f"{key}.model", spec.get("revision"), f"{key}.revision")
    for key in ("generator", "positions", "sweep"):
        needs.model((data.get(key) or {}).get("tokenizer"), f"{key}.tokenizer")
    needs.model(((data.get("tables") or {}).get("dataset_stats") or {}).get("tokenizer"),
                "tables.dataset_stats.tokenizer")


def _analysis_stages(needs: _Needs, data: Mapping) -> None:
    probes = data.get("probes") or {}
    for group in ("files", "dedup_files"):
        for index, entry in enumerate((probes.get("redocred") or {}).get(group) or []):
            key = f"probes.redocred.{group}[{index}]"
            needs.file(entry["path"], f"{key}.path", entry.get("sha256"), f"{key}.sha256", REDOCRED_HINT)
    for name, scorer in (probes.get("scorers") or {}).items():
        for side in ("query_model", "doc_model"):
            needs.model(scorer.get(side), f"probes.scorers.{name}.{side}")
    poison = probes.get("poison") or {}
    if poison.get("source") == "file":
        needs.file(poison.get("path"), "probes.poison.path")

    litm = data.get("litm") or {}
    for task, hint in (("qa", QA_SOURCE_HINT), ("kv", "the Lost-in-the-Middle key-value data")):
        source = (litm.get(task) or {}).get("source") or {}
        if source.get("kind") in ("retrieval", "files"):
            needs.file(source["path"], f"litm.{task}.source.path", source.get("sha256"),
                       f"litm.{task}.source.sha256", hint)
    _audit(needs, data.get("audit") or {})


def _audit(needs: _Needs, audit: Mapping) -> None:
    from posbias.audit.spec import LLM_KINDS, parse_model_spec
    from posbias.data.sources.hf import LONGEMBED
    from posbias.errors import InputError
    from posbias.llm.spec import LOCAL_BACKENDS

    settings = [("audit.settings", audit.get("settings") or {})]
    for name, spec in (audit.get("models") or {}).items():
        settings.append((f"audit.models.{name}.settings", spec.get("settings") or {}))
        if not isinstance(spec.get("model"), str):
            continue  # a trained model of this results tree, or a mitigation of another entry
        key = f"audit.models.{name}.model"
        try:
            ref = parse_model_spec(spec["model"])
        except InputError:
            continue  # the audit section's own check names it
        revision = ref.options.get("revision")
        if ref.kind in ("cross-encoder", "bi-encoder"):
            needs.model(ref.target, key, revision, key)
        elif ref.kind in LLM_KINDS and ref.backend in LOCAL_BACKENDS:
            needs.model(ref.llm_model, key, revision, key)
    for where, batteries in settings:
        for battery, values in batteries.items():
            source = (values or {}).get("source")
            if not isinstance(source, Mapping):
                continue
            key = f"{where}.{battery}.source"
            if "longembed" in source:
                path = source.get("path") or LONGEMBED
                if is_hub_id(path, "dataset"):
                    needs.hub_dataset(path, key, source.get("revision"))
                continue
            for name, path in source.items():
                if name != "pool_size" and not name.endswith("_sha256"):
                    checked = name in CHECKED_SOURCE_FILES
                    needs.file(path, f"{key}.{name}", source.get(f"{name}_sha256"),
                               f"{key}.{name}_sha256" if checked else None, HINTS.get(name, ""))


def hub_pins(needs: Iterable[Need]) -> dict[str, str]:
    """Each hub model's pinned revision (what jobs receive as POSBIAS_REVISIONS)."""
    return {need.name: need.revision for need in needs if need.kind == HUB_MODEL and need.revision}


def select(needs: Iterable[Need], jobs: Iterable[tuple[str, Mapping[str, str]]]) -> list[Need]:
    """The needs of the scheduled `jobs` ((rule, wildcards) pairs, from a dry run of the targets): those whose
    config entry (a collection, query set, model, retriever, scorer, audit model or battery) a wildcard names, or
    whose name does (a token store's tokenizer), and the inputs of an analysis stage one of whose rules runs."""
    from posbias.config.sections.models import tokenizer_key

    jobs = list(jobs)
    rules = {rule for rule, _ in jobs}
    values = {value for _, wildcards in jobs for value in wildcards.values()}

    def wanted(need: Need) -> bool:
        if need.name in values or tokenizer_key(need.name) in values:
            return True
        for key in need.used_by:
            section, _, rest = key.partition(".")
            entry = rest.split(".")[0].split("[")[0]
            if entry in values or any(rule.startswith(SECTION_RULES.get(section, ())) for rule in rules):
                return True
        return False

    return [need for need in needs if wanted(need)]
