"""posbias.config: reading and layering files, the schema, every cross-check and what jobs receive.

Each case is the embedded default (config.yaml) with one small mutation, prepared in-process."""

from __future__ import annotations

import copy
import json
import random
import re
from pathlib import Path

import pytest
import yaml

from posbias.config import ConfigError, canonical, load_config, prepare, read_config_file, read_layered, validate

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = yaml.safe_load((ROOT / "config.yaml").read_text(encoding="utf-8"))
ROBUST = "disks45/nocr/trec-robust-2004"
# --- building configs ----------------------------------------------------------------------------


def fresh() -> dict:
    # The JSON round trip also undoes YAML aliases (`args: *window16`), so that mutating one model's
    # args leaves the models that share the anchor alone.
    return json.loads(json.dumps(DEFAULT))


def mutated(*mutations) -> dict:
    data = fresh()
    for mutation in mutations:
        mutation(data)
    return data


def _parent(data: dict, path: str):
    *parents, last = [int(p) if p.isdigit() else p for p in path.split(".")]
    for key in parents:
        data = data[key]
    return data, last


def put(path: str, value):
    def mutation(data):
        node, key = _parent(data, path)
        node[key] = copy.deepcopy(value)
    return mutation


def drop(path: str):
    def mutation(data):
        node, key = _parent(data, path)
        del node[key]
    return mutation


def append(path: str, value):
    def mutation(data):
        node, key = _parent(data, path)
        node[key].append(copy.deepcopy(value))
    return mutation


def without(path: str, item):
    def mutation(data):
        node, key = _parent(data, path)
        node[key] = [x for x in node[key] if x != item]
    return mutation


def with_robust(**queryset_keys):
    """A collection read from ir_datasets and a reranked query set `robust` of it with two folds."""
    def mutation(data):
        data["collections"] = {"robust": {"documents": {"kind": "ir_datasets", "id": ROBUST}}}
        data["querysets"]["robust"] = {"collection": "robust", "source": {"kind": "ir_datasets", "id": ROBUST},
                                       "folds": [f"{ROBUST}/fold1", f"{ROBUST}/fold2"], "metrics": ["AP"],
                                       **queryset_keys}
        data["rerank"]["querysets"].append("robust")
    return mutation


def with_pool(name: str = "dl", pool=("dev", "test"), **keys):
    return put(f"querysets.{name}", {"pool": list(pool), "metrics": ["nDCG@10"], **keys})


def reordered(value, order):
    """`value` with the keys of every mapping in `order(keys)`; lists untouched."""
    if isinstance(value, dict):
        return {k: reordered(value[k], order) for k in order(list(value))}
    if isinstance(value, list):
        return [reordered(v, order) for v in value]
    return value


def shuffled(keys):
    return random.Random(len(keys)).sample(keys, len(keys))


def derived(cfg) -> str:
    """Everything jobs receive through `params:`, job by job, printed as Snakemake compares it."""
    models, querysets = sorted(cfg.models), sorted(cfg.querysets)
    return repr({
        "model_params": {m: cfg.models.params(m) for m in models},
        "training_params": {m: cfg.models.training_params(m) for m in models},
        "finetuning": {m: cfg.models.training_params(m, cfg.finetuning.get("training")) for m in models},
        "scoring": {m: cfg.rerank.scoring(m) for m in models},
        "evaluation_params": {q: cfg.querysets.evaluation_params(q) for q in querysets},
        "table_params": {t: cfg.tables.params(t) for t in (*cfg.tables.of_layout("baseline"), "table4")},
        "tokenizers": {k: cfg.models.tokenizers[k] for k in sorted(cfg.models.tokenizers)},
    })


def write_yaml(path: Path, data) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def starts_with_path(path: Path, rest: str) -> str:
    return "^" + re.escape(str(path)) + rest


# --- the shipped configs -------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["config.yaml", "config/test/tiny.yaml", "config/embedded-full.yaml"])
def test_shipped_config_prepares_without_warnings(path):
    cfg = load_config(ROOT / path)
    assert cfg.warnings == []
    assert cfg.models.names and cfg.rerank.querysets


def test_the_full_embedded_zoo_is_the_demo_with_every_twin():
    """config/embedded-eight.yaml adds two models to the demo's and config/embedded-full.yaml the twins to those,
    each changing none of the models below it (their anchors repeat config.yaml's), and every table shows them (but
    the de-biased ones and firstp_cls, which reranks nothing: the audit's)."""
    demo, eight, full = (load_config(ROOT / name) for name in
                         ("config.yaml", "config/embedded-eight.yaml", "config/embedded-full.yaml"))
    assert set(demo.models.names) < set(eight.models.names) < set(full.models.names)
    assert all(full.models.params(m) == eight.models.params(m) == demo.models.params(m) for m in demo.models.names)
    assert all(full.models.params(m) == eight.models.params(m) for m in eight.models.names)
    assert sorted(set(eight.models.trained) - set(demo.models.trained)) == ["cedr_knrm", "parade_transf_rand"]
    assert sorted(set(full.models.trained) - set(eight.models.trained)) == [
        "avgp", "firstp_smollm2", "longp_smollm2", "neural_model1_debiased", "parade_avg", "parade_max", "sump"]
    assert set(eight.tables["table1"]["models"]) == set(demo.tables["table1"]["models"]) | {"cedr_knrm",
                                                                                            "parade_transf_rand"}
    for table in ("table1", "table4", "table7"):
        assert set(full.tables[table]["models"]) == set(full.models.names) - {"longp_debiased",
                                                                             "neural_model1_debiased", "firstp_cls"}
    assert full.tables["table2"]["models"] == ["neural_model1_debiased", "longp_debiased"]


def test_prepare_leaves_the_callers_mapping_alone():
    data = fresh()
    prepare(data)
    assert data == fresh()


# --- reading files -------------------------------------------------------------------------------


def test_missing_config_file_is_named(tmp_path):
    with pytest.raises(ConfigError, match=starts_with_path(tmp_path / "nope.yaml", ": no such config file$")):
        load_config(tmp_path / "nope.yaml")


def test_yaml_syntax_error_names_file_and_line(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("training:\n  epochs: 1\n  seeds: [1, 2\nrerank: {}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=starts_with_path(path, r":4: YAML syntax error: ")):
        read_config_file(path)


def test_file_that_is_not_utf8_is_named(tmp_path):
    path = tmp_path / "latin1.yaml"
    path.write_bytes("label: Caf\xe9\n".encode("latin-1"))
    with pytest.raises(ConfigError, match=starts_with_path(path, ": cannot be read as a UTF-8 config file")):
        read_config_file(path)


@pytest.mark.parametrize(("text", "kind"), [("- a\n- b\n", "list"), ("just text\n", "str"), ("", "NoneType")])
def test_top_level_must_be_a_mapping(tmp_path, text, kind):
    path = tmp_path / "c.yaml"
    path.write_text(text, encoding="utf-8")
    message = starts_with_path(path, f": a config is a YAML mapping of sections, got {kind}$")
    with pytest.raises(ConfigError, match=message):
        read_config_file(path)


def test_load_config_needs_a_file():
    with pytest.raises(ConfigError, match="^no config file given$"):
        load_config()


# --- base: layering ------------------------------------------------------------------------------


def test_single_base_is_merged_key_by_key_and_lists_are_replaced(tmp_path):
    write_yaml(tmp_path / "full.yaml", fresh())
    top = write_yaml(tmp_path / "top.yaml", {"base": "full.yaml", "training": {"epochs": 5, "seeds": [7]},
                                             "rerank": {"batch_size": 8}})
    cfg = load_config(top)
    assert cfg.data["training"]["epochs"] == 5
    assert cfg.training.seeds == [7]  # a list is replaced, not appended to
    assert cfg.data["training"]["batch_size"] == DEFAULT["training"]["batch_size"]  # kept from the base
    assert cfg.rerank.querysets == DEFAULT["rerank"]["querysets"] and cfg.data["rerank"]["batch_size"] == 8


def test_real_redocred_files_layered_on_the_demo_replace_its_synthetic_world(tmp_path):
    """`probes.redocred` holds alternatives (a synthetic world or files): a layer setting one replaces the other."""
    demo = Path(__file__).resolve().parents[1] / "config.yaml"
    top = write_yaml(tmp_path / "top.yaml", {"base": str(demo), "probes": {"redocred": {
        "files": [{"path": "data/redocred/test_revised.json", "split": "test"}]}}})
    redocred = read_layered(top)["probes"]["redocred"]
    assert "synthetic" not in redocred and redocred["files"][0]["split"] == "test"
    assert read_layered(demo)["probes"]["redocred"]["synthetic"]  # the demo itself keeps its world


@pytest.mark.parametrize(("bases", "seeds"), [(["full.yaml", "seeds.yaml"], [4, 5]),
                                              (["seeds.yaml", "full.yaml"], DEFAULT["training"]["seeds"])])
def test_a_list_of_bases_merges_in_order_with_the_file_on_top(tmp_path, bases, seeds):
    write_yaml(tmp_path / "full.yaml", fresh())
    write_yaml(tmp_path / "seeds.yaml", {"training": {"seeds": [4, 5]}, "rerank": {"batch_size": 8}})
    top = write_yaml(tmp_path / "top.yaml", {"base": bases, "rerank": {"batch_size": 16}})
    cfg = load_config(top)
    assert cfg.training.seeds == seeds
    assert cfg.data["rerank"]["batch_size"] == 16


def test_base_paths_are_relative_to_the_file_naming_them(tmp_path, monkeypatch):
    write_yaml(tmp_path / "shared" / "full.yaml", fresh())
    write_yaml(tmp_path / "shared" / "common.yaml", {"base": "full.yaml", "training": {"epochs": 3}})
    write_yaml(tmp_path / "exp" / "top.yaml", {"base": "../shared/common.yaml", "rerank": {"batch_size": 8}})
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")  # neither the cwd nor the top file's folder holds full.yaml
    cfg = load_config(Path("..") / "exp" / "top.yaml")
    assert cfg.data["training"]["epochs"] == 3
    assert cfg.data["rerank"]["batch_size"] == 8
    assert cfg.models.names == sorted(DEFAULT["models"])


def test_shared_base_reached_twice_is_not_a_cycle(tmp_path):
    write_yaml(tmp_path / "full.yaml", fresh())
    write_yaml(tmp_path / "a.yaml", {"base": "full.yaml", "training": {"epochs": 3}})
    write_yaml(tmp_path / "b.yaml", {"base": "full.yaml", "rerank": {"batch_size": 8}})
    cfg = load_config(write_yaml(tmp_path / "top.yaml", {"base": ["a.yaml", "b.yaml"]}))
    assert cfg.data["rerank"]["batch_size"] == 8
    # full.yaml is merged once, under both: b's copy of it does not undo a's change
    assert cfg.data["training"]["epochs"] == 3


def test_base_cycle_is_an_error_naming_the_files(tmp_path):
    write_yaml(tmp_path / "a.yaml", {"base": "b.yaml"})
    write_yaml(tmp_path / "b.yaml", {"base": ["a.yaml"]})
    with pytest.raises(ConfigError, match=r"a\.yaml: base: files include each other \(.*a\.yaml -> .*b\.yaml -> "
                                          r".*a\.yaml\)$"):
        load_config(tmp_path / "a.yaml")


def test_file_that_is_its_own_base_is_a_cycle(tmp_path):
    path = write_yaml(tmp_path / "self.yaml", {"base": "self.yaml"})
    with pytest.raises(ConfigError, match=r"self\.yaml: base: files include each other"):
        load_config(path)


@pytest.mark.parametrize("base", [3, ["full.yaml", 3], {"file": "full.yaml"}, None])
def test_base_of_a_wrong_type_is_an_error(tmp_path, base):
    write_yaml(tmp_path / "full.yaml", fresh())
    top = write_yaml(tmp_path / "top.yaml", {"base": base})
    with pytest.raises(ConfigError, match=starts_with_path(top, ": base: a file name or a list of file names$")):
        load_config(top)


def test_missing_base_file_is_named(tmp_path):
    top = write_yaml(tmp_path / "top.yaml", {"base": "gone.yaml"})
    with pytest.raises(ConfigError, match=starts_with_path(tmp_path / "gone.yaml", ": no such config file$")):
        load_config(top)


def test_load_config_merges_files_in_order_then_overrides(tmp_path):
    full = write_yaml(tmp_path / "full.yaml", fresh())
    more = write_yaml(tmp_path / "more.yaml", {"training": {"seeds": [4, 5], "epochs": 3}})
    cfg = load_config(full, more, overrides={"training": {"seeds": [9]}})
    assert cfg.training.seeds == [9]
    assert cfg.data["training"]["epochs"] == 3
    assert cfg.data["training"]["batch_size"] == DEFAULT["training"]["batch_size"]


def test_load_config_overrides_are_validated():
    with pytest.raises(ConfigError, match=r"^training\.epochs: "):
        load_config(ROOT / "config.yaml", overrides={"training": {"epochs": 0}})


# --- schema --------------------------------------------------------------------------------------


SCHEMA_ERRORS = [
    pytest.param(put("models.maxp.lr", -1), r"^models\.maxp\.lr: -1 is less than or equal to the minimum of 0",
                 id="number-out-of-range"),
    pytest.param(put("models.maxp.lr", "2e-4"), r"^models\.maxp\.lr: '2e-4' is not of type 'number'",
                 id="yaml-string-not-a-number"),
    pytest.param(put("querysets.dev.alpha", 1.5), r"^querysets\.dev\.alpha: ", id="alpha-above-one"),
    pytest.param(drop("retrievers.hybrid.encoder"), r"^retrievers\.hybrid: 'encoder' is a required property",
                 id="hybrid-without-encoder"),
    pytest.param(put("retrievers.bm25.encoder", {"model": "m"}), r"^retrievers\.bm25\.encoder: unknown key; known: b, k1, kind$",
                 id="bm25-with-encoder"),
    pytest.param(with_pool(pool=["dev"]), r"^querysets\.dl\.pool: ", id="pool-of-one"),
    pytest.param(put("training.seeds", [1, 1]), r"^training\.seeds: ", id="seed-twice"),
    pytest.param(put("training.compile", "yes"), r"^training\.compile: 'yes' is not of type 'boolean'",
                 id="compile-not-a-boolean"),
    pytest.param(drop("rerank"), r"^rerank: missing; the long-document study needs querysets, training, rerank, "
                                 r"models, tables together \(this config sets querysets, training, models, tables\)",
                 id="study-section-missing"),
    pytest.param(put("tables.table4.unknown", 1), r"^tables\.table4\.unknown: unknown key; known: columns, models",
                 id="unknown-key"),
    pytest.param(put("bogus", 1), r"^bogus: unknown key; known: audit, collections, cross_validation, departures, experiment",
                 id="unknown-section"),
]


@pytest.mark.parametrize(("mutation", "message"), SCHEMA_ERRORS)
def test_schema_error_starts_with_the_key_path(mutation, message):
    with pytest.raises(ConfigError, match=message):
        prepare(mutated(mutation))


def test_a_config_without_the_study_runs_only_the_probes():
    """A probes-only config (the demo's synthetic world, its BM25 and MiniLM scorers) loads with no query sets,
    models, tables, training or reranking."""
    probes = copy.deepcopy(DEFAULT["probes"])
    probes["scorers"] = {name: s for name, s in probes["scorers"].items() if s.get("kind") != "checkpoint"}
    cfg = prepare({"probes": probes})
    assert cfg.models == {} and cfg.querysets == {} and cfg.training.seeds == [] and cfg.rerank.querysets == []
    assert cfg.data["probes"]["scorers"].keys() == probes["scorers"].keys()


def test_a_probes_only_config_refuses_a_checkpoint_scorer_without_its_model():
    with pytest.raises(ConfigError, match=r"^probes\.scorers\.firstp\.model: 'firstp' is not a key of models$"):
        prepare({"probes": DEFAULT["probes"]})


def test_a_config_with_nothing_to_run_is_refused():
    with pytest.raises(ConfigError, match=r"^\(top level\): nothing to run"):
        prepare({"llm": DEFAULT["llm"]})


def test_schema_error_in_a_list_item_spells_the_key_like_the_cross_checks():
    with pytest.raises(ConfigError, match=r"^tables\.table1\.columns\[0\]\.metric: "):
        prepare(mutated(put("tables.table1.columns.0.metric", 3)))


def test_schema_fills_defaults():
    def strip_defaulted(data):
        data["querysets"]["dev"] = {k: v for k, v in data["querysets"]["dev"].items()
                                    if k not in ("retriever", "depth", "alpha", "rel_level")}
        data["training"].pop("save_every", None)
        data["tables"]["table1"].pop("retriever_label", None)

    cfg = prepare(mutated(drop("statistics"), drop("retrievers"), drop("tables.first_stage"), strip_defaulted))
    assert cfg.data["statistics"] == {"test": "t", "correction": "none", "permutations": 10000, "seed": 0}
    assert cfg.retrievers == {"bm25": {"kind": "bm25", "k1": 0.9, "b": 0.4}}
    assert cfg.data["querysets"]["dev"] == {**DEFAULT["querysets"]["dev"], "retriever": "bm25", "depth": 100,
                                            "alpha": 0.05, "rel_level": 1}
    assert cfg.data["training"]["save_every"] == 0 and cfg.data["training"]["save_minutes"] == 20
    assert {k: cfg.data["training"][k] for k in ("tf32", "prefetch", "compile")} == {"tf32": True, "prefetch": True,
                                                                                   "compile": False}
    assert {k: cfg.data["rerank"][k] for k in ("tf32", "compile")} == {"tf32": True, "compile": False}
    assert cfg.data["tables"]["table1"]["retriever_label"] == "BM25 (retriever)"


def test_schema_fills_the_defaults_of_the_hybrid_branch_only():
    cfg = prepare(mutated(put("retrievers.hybrid", {"kind": "hybrid", "encoder": {"model": "m"}})))
    hybrid = cfg.retrievers["hybrid"]
    assert (hybrid["bm25"], hybrid["weight"], hybrid["faiss"]) == ("bm25", 0.5, {"index": "flat", "use_gpu": "auto"})
    assert hybrid["encoder"]["pooling"] == "cls"
    assert set(cfg.retrievers["bm25"]) == {"kind", "k1", "b"}


def test_validate_accepts_anchor_sections():
    assert "x-backbone" in validate(fresh())


# --- cross-checks --------------------------------------------------------------------------------


def check_rejects(mutations, message):
    mutations = mutations if isinstance(mutations, tuple) else (mutations,)
    with pytest.raises(ConfigError, match=message):
        prepare(mutated(*mutations))


COLLECTION_ERRORS = [
    pytest.param(drop("querysets.dev.collection"), r"^querysets\.dev: needs `collection` \(or `pool`",
                 id="queryset-without-collection"),
    pytest.param(put("querysets.extra", {"collection": "synthetic", "metrics": ["AP"]}),
                 r"^querysets\.extra: the synthetic collection has only \('train', 'dev', 'test'\)",
                 id="synthetic-queryset-not-generated"),
    pytest.param(put("querysets.dev.source", {"kind": "local", "queries": "q.tsv", "qrels": "q.qrels"}),
                 r"^querysets\.dev\.source: the generated synthetic collection writes its own",
                 id="generated-with-source"),
    pytest.param(put("querysets.farrelevant.folds", "folds.tsv"),
                 r"^querysets\.farrelevant\.folds: the generated farrelevant collection writes its own",
                 id="generated-with-folds"),
    pytest.param(put("querysets.dev.collection", "robust"),
                 r"^querysets\.dev\.collection: 'robust' is neither a generated collection",
                 id="unknown-collection"),
    pytest.param((with_robust(), drop("querysets.robust.source")),
                 r"^querysets\.robust\.source: required for query sets of collection 'robust'",
                 id="sourced-collection-without-source"),
    pytest.param((with_robust(), put("querysets.robust.source", {"kind": "local", "queries": "q.tsv"})),
                 r"^querysets\.robust\.source: a local source needs `queries` and `qrels`",
                 id="local-source-without-qrels"),
    pytest.param((with_robust(), put("querysets.robust.source", {"kind": "local", "queries": "q", "qrels": "r"})),
                 r"^querysets\.robust\.folds: a list names ir_datasets subsets",
                 id="fold-list-without-ir_datasets"),
    pytest.param((with_robust(), put("collections.robust.documents", {"kind": "local"})),
                 r"^collections\.robust\.documents\.path: required for a local source",
                 id="local-documents-without-path"),
    pytest.param(put("farrelevant.train_queryset", "dev"),
                 r"^farrelevant\.train_queryset: 'dev' is not a query set of the farrelevant collection",
                 id="farrelevant-train-queryset-elsewhere"),
    pytest.param(put("querysets.far2", {"collection": "farrelevant", "metrics": ["RR"]}),
                 r"^querysets: only one query set \(besides farrelevant\.train_queryset\) may use the farrelevant",
                 id="two-farrelevant-test-querysets"),
    pytest.param(drop("generator"),
                 r"^generator: required because a query set uses the \['farrelevant', 'synthetic'\] collection",
                 id="generator-section-missing"),
    pytest.param((drop("farrelevant"), drop("querysets.farrelevant_train")),
                 r"^farrelevant: required because a query set uses the \['farrelevant'\] collection",
                 id="farrelevant-section-missing"),
]


@pytest.mark.parametrize(("mutations", "message"), COLLECTION_ERRORS)
def test_collection_check_names_the_key(mutations, message):
    check_rejects(mutations, message)


POOL_ERRORS = [
    *(pytest.param(with_pool(**{key: value}), rf"^querysets\.dl\.{key}: a pooled query set takes its queries from "
                   rf"`pool`", id=f"pool-with-{key}")
      for key, value in [("collection", "synthetic"), ("source", {"kind": "local", "queries": "q", "qrels": "r"}),
                         ("folds", "folds.tsv"), ("candidates", "given.run")]),
    pytest.param(with_pool(pool=["dev", "dev"]), r"^querysets\.dl\.pool: lists a query set twice", id="member-twice"),
    pytest.param(with_pool(pool=["dev", "nope"]), r"^querysets\.dl\.pool: 'nope' is not a key of querysets",
                 id="unknown-member"),
    pytest.param((with_pool(), with_pool("dl2", pool=["dev", "dl"])), r"^querysets\.dl2\.pool: 'dl' is itself pooled",
                 id="member-pooled"),
    pytest.param(with_pool(pool=["dev", "train"]), r"^querysets\.dl\.pool: 'train' is not in rerank\.querysets",
                 id="member-not-reranked"),
    pytest.param((with_pool(), put("querysets.dl.metrics", ["RR@10"]), put("querysets.dev.metrics", ["RR@10"]),
                  put("querysets.test.metrics", ["nDCG@10"])),
                 r"^querysets\.dl\.metrics: \['RR@10'\] not in querysets\.test\.metrics", id="metric-not-in-member"),
    pytest.param((with_pool(), put("training.queryset", "dl")),
                 r"^training\.queryset: 'dl' is not a \(not pooled\) key of querysets", id="trained-on-pool"),
    pytest.param((with_pool(), append("rerank.querysets", "dl")),
                 r"^rerank\.querysets: 'dl' is not a \(not pooled\) key of querysets", id="pool-reranked"),
    pytest.param((with_pool(), put("finetuning.queryset", "dl")),
                 r"^finetuning\.queryset: 'dl' is not a \(not pooled\) key of querysets", id="fine-tuned-on-pool"),
    pytest.param((with_pool(), append("tables.first_stage.querysets", "dl")),
                 r"^tables\.first_stage\.querysets: 'dl' is not a \(not pooled\) key of querysets",
                 id="pool-in-first-stage"),
    pytest.param((with_pool(), append("tables.dataset_stats.querysets", "dl")),
                 r"^tables\.dataset_stats\.querysets: 'dl' is not a \(not pooled\) key of querysets",
                 id="pool-in-dataset-stats"),
    pytest.param((with_pool(), put("tables.outcomes.querysets", ["dl"])),
                 r"^tables\.outcomes\.querysets: 'dl' is not in rerank\.querysets", id="pool-in-outcomes"),
]


@pytest.mark.parametrize(("mutations", "message"), POOL_ERRORS)
def test_pool_check_names_the_key(mutations, message):
    check_rejects(mutations, message)


def test_pooled_queryset_is_evaluated_and_shown_but_not_retrieved():
    cfg = prepare(mutated(with_pool(), append("tables.table1.columns", {"queryset": "dl", "metric": "nDCG@10"})))
    pool = cfg.querysets["dl"]
    assert pool.pooled and pool.pool == ("dev", "test")
    assert (pool.collection, pool.depth, pool.retriever) == (None, None, None)
    assert cfg.querysets.pooled == ["dl"]
    assert cfg.rerank.evaluated == [*cfg.rerank.querysets, "dl"]
    assert "dl" in cfg.tables.querysets("table1") and "dl" in cfg.tables.params("table1")["querysets"]


RETRIEVER_ERRORS = [
    pytest.param(put("querysets.dev.retriever", "nope"), r"^querysets\.dev\.retriever: 'nope' is not a key of "
                 r"retrievers", id="queryset-retriever-unknown"),
    pytest.param(put("retrievers.hybrid.bm25", "nope"), r"^retrievers\.hybrid\.bm25: 'nope' is not a bm25 retriever",
                 id="hybrid-partner-unknown"),
    pytest.param(put("retrievers.hybrid.bm25", "hybrid"),
                 r"^retrievers\.hybrid\.bm25: 'hybrid' is not a bm25 retriever", id="hybrid-partner-not-bm25"),
    pytest.param(append("tables.first_stage.querysets", "nope"),
                 r"^tables\.first_stage\.querysets: 'nope' is not a \(not pooled\) key of querysets",
                 id="first-stage-queryset-unknown"),
    pytest.param(append("tables.first_stage.retrievers", "nope"),
                 r"^tables\.first_stage\.retrievers: 'nope' is not a key of retrievers",
                 id="first-stage-retriever-unknown"),
]


@pytest.mark.parametrize(("mutations", "message"), RETRIEVER_ERRORS)
def test_retriever_check_names_the_key(mutations, message):
    check_rejects(mutations, message)


TRAINING_ERRORS = [
    pytest.param(put("training.queryset", "nope"), r"^training\.queryset: 'nope' is not a \(not pooled\) key",
                 id="training-queryset-unknown"),
    pytest.param(append("rerank.querysets", "nope"), r"^rerank\.querysets: 'nope' is not a \(not pooled\) key",
                 id="rerank-queryset-unknown"),
    pytest.param(append("rerank.querysets", "dev"), r"^rerank\.querysets: lists a query set twice",
                 id="rerank-queryset-twice"),
    pytest.param(put("cross_validation", {"querysets": ["train"]}),
                 r"^cross_validation\.querysets: 'train' is not in rerank\.querysets", id="cv-queryset-not-reranked"),
    pytest.param(put("cross_validation", {"querysets": ["dev"]}), r"^cross_validation\.querysets: 'dev' has no "
                 r"`folds`", id="cv-queryset-without-folds"),
    pytest.param(put("finetuning.queryset", "nope"), r"^finetuning\.queryset: 'nope' is not a \(not pooled\) key",
                 id="finetuning-queryset-unknown"),
    pytest.param(put("finetuning.querysets", ["train"]),
                 r"^finetuning\.querysets: 'train' must be in rerank\.querysets and not cross-validated",
                 id="finetuned-queryset-not-reranked"),
    pytest.param((with_robust(), put("cross_validation", {"querysets": ["robust"]}),
                  put("finetuning.querysets", ["robust"])),
                 r"^finetuning\.querysets: 'robust' must be in rerank\.querysets and not cross-validated",
                 id="finetuned-queryset-cross-validated"),
]


@pytest.mark.parametrize(("mutations", "message"), TRAINING_ERRORS)
def test_training_check_names_the_key(mutations, message):
    check_rejects(mutations, message)


def test_cross_validated_sourced_queryset_is_accepted():
    cfg = prepare(mutated(with_robust(), put("cross_validation", {"querysets": ["robust"]})))
    assert cfg.cross_validation.querysets == ["robust"]
    assert "robust" in cfg.rerank.querysets and "robust" not in cfg.rerank.direct
    assert cfg.querysets.folds_count("robust") == 2


MODEL_ERRORS = [
    pytest.param(put("models.maxp.baseline", "nope"), r"^models\.maxp\.baseline: 'nope' is not a configured model",
                 id="baseline-unknown"),
    pytest.param(put("models.maxp.baseline", "parade_attn"),
                 r"^models\.maxp\.baseline: 'parade_attn' is not a firstp model",
                 id="baseline-not-firstp"),
    pytest.param(put("models.firstp.args", {**DEFAULT["models"]["firstp"]["args"], "chunk_tokens": 24, "stride": 24,
                                            "max_doc_tokens": 48}),
                 r"^models\.firstp\.args: firstp reads one chunk: max_doc_tokens \(48\) must equal chunk_tokens \(24\)",
                 id="firstp-reads-past-chunk"),
    pytest.param(put("models.longp", {**DEFAULT["models"]["maxp"], "label": "LongP", "ranker": "longp"}),
                 r"^models\.longp\.args: longp reads the document in one sequence", id="longp-windows"),
    pytest.param((put("models.maxp.seeds", [1, 2]), put("models.maxp.excluded_seeds", [7])),
                 r"^models\.maxp\.excluded_seeds: \[7\] are not among its seeds \[1, 2\]", id="excluded-seed-unknown"),
    pytest.param((put("models.maxp.seeds", [1, 2]), put("models.maxp.excluded_seeds", [1, 2])),
                 r"^models\.maxp\.excluded_seeds: every seed is excluded", id="every-seed-excluded"),
    pytest.param(put("models.longp_e5.seeds", [1]),
                 r"^models\.longp_e5: a zero-shot model is never trained, so it takes no seeds", id="zero-shot-seeds"),
    pytest.param(put("models.firstp_e5.zero_shot", False),
                 r"^models\.longp_e5\.baseline: 'longp_e5' is zero-shot but its baseline 'firstp_e5' is trained",
                 id="zero-shot-model-trained-baseline"),
    pytest.param(put("tables.table4.reference", "longp_e5"),
                 r"^tables\.table4\.reference: 'longp_e5' is zero-shot, so it has no fine-tuned value",
                 id="zero-shot-table4-reference"),
    pytest.param(put("models.cedr", {**DEFAULT["models"]["maxp"], "label": "CEDR-KNRM", "ranker": "cedr_knrm"}),
                 r"^models\.cedr\.args: cedr_knrm reads greedy disjoint chunks: stride \(\d+\) must equal",
                 id="cedr-overlapping-windows"),
    pytest.param((put("models.maxp.args.chunk_tokens", 24), put("models.maxp.args.stride", 30)),
                 r"^models\.maxp\.args\.stride: larger than chunk_tokens", id="stride-skips-text"),
    pytest.param((put("models.maxp.args.chunk_tokens", 96), put("models.maxp.args.stride", 24),
                  put("models.maxp.args.max_doc_tokens", 72)),
                 r"^models\.maxp\.args\.chunk_tokens: larger than max_doc_tokens", id="chunk-beyond-budget"),
    pytest.param((put("models.maxp.label", "Twin"), put("models.parade_attn.label", "Twin")),
                 r"^models\.parade_attn\.label: 'Twin' is also the label of models\.maxp", id="label-twice"),
    pytest.param(put("models.maxp.args.attention", "per_dim"),
                 r"^models\.maxp\.args\.attention: not an argument of ranker 'maxp'", id="argument-of-another-ranker"),
]


@pytest.mark.parametrize(("mutations", "message"), MODEL_ERRORS)
def test_model_check_names_the_key(mutations, message):
    check_rejects(mutations, message)


TABLE_ERRORS = [
    pytest.param(put("tables.table11", {"models": ["firstp", "nope"]}),
                 r"^tables\.table11\.models: 'nope' is not a configured model", id="table11-model-unknown"),
    pytest.param(append("tables.table1.models", "maxp"), r"^tables\.table1\.models: lists a model twice",
                 id="model-twice"),
    pytest.param(append("tables.table7.models", "nope"), r"^tables\.table7\.models: 'nope' is not a configured model",
                 id="model-unknown"),
    pytest.param(without("tables.table1.models", "firstp"),
                 r"^tables\.table1\.models: '\w+' needs its baseline 'firstp' in the table", id="baseline-not-shown"),
    pytest.param(put("tables.table1.columns.0.queryset", "train"),
                 r"^tables\.table1\.columns\[0\]\.queryset: 'train' is not in rerank\.querysets or a pooled query set",
                 id="column-queryset-not-evaluated"),
    pytest.param((put("tables.table1.columns.1", {"queryset": "dev", "metric": "P@5"}),
                  put("querysets.dev.metrics", ["RR@10"])),
                 r"^tables\.table1\.columns\[1\]\.metric: 'P@5' is not in querysets\.dev\.metrics",
                 id="column-metric-not-stored"),
    pytest.param(drop("finetuning"),
                 r"^tables\.table4\.columns\[1\]\.setting: fine-tuned needs 'farrelevant' in finetuning\.querysets",
                 id="fine-tuned-column-without-finetuning"),
    pytest.param(put("tables.table1.columns", [{"queryset": "dev", "metric": "AP", "header": "dev AP"},
                                               {"queryset": "dev", "metric": "AP"}]),
                 r"^tables\.table1\.columns\[1\]\.header: 'dev AP' is also the header of tables\.table1\.columns\[0\]",
                 id="default-header-twice"),
    pytest.param(put("tables.table1.retriever_label", "MaxP"),
                 r"^tables\.table1\.retriever_label: 'MaxP' is also a model's label", id="retriever-label-clash"),
    pytest.param(without("tables.table4.models", "maxp"),
                 r"^tables\.table4\.reference: 'maxp' is not among tables\.table4\.models", id="reference-not-shown"),
    pytest.param(put("tables.outcomes.querysets", ["train"]),
                 r"^tables\.outcomes\.querysets: 'train' is not in rerank\.querysets", id="outcomes-not-reranked"),
    pytest.param(put("tables.outcomes.models", ["nope"]),
                 r"^tables\.outcomes\.models: 'nope' is not a configured model", id="outcomes-model-unknown"),
    pytest.param(append("tables.dataset_stats.querysets", "nope"),
                 r"^tables\.dataset_stats\.querysets: 'nope' is not a \(not pooled\) key", id="stats-queryset-unknown"),
    pytest.param(put("tables.tabel1", {"columns": [{"queryset": "dev", "metric": "RR@10"}]}),
                 r"^tables\.tabel1: 'layout' is a required property", id="new-table-without-layout"),
    pytest.param(put("tables.mine", {"layout": "debias", "columns": [{"queryset": "dev", "metric": "RR@10"}]}),
                 r"^tables\.mine: 'models' is a required property", id="new-table-checked-by-its-layout"),
]


@pytest.mark.parametrize(("mutations", "message"), TABLE_ERRORS)
def test_table_check_names_the_key(mutations, message):
    check_rejects(mutations, message)


def test_table4_may_leave_out_the_baseline_and_tell_settings_apart_by_header():
    cfg = prepare(mutated(without("tables.table4.models", "firstp"),
                          put("tables.table4.columns", [{"queryset": "farrelevant", "metric": "RR"},
                                                        {"queryset": "farrelevant", "metric": "RR",
                                                         "setting": "fine-tuned"}])))
    assert "firstp" not in cfg.tables["table4"]["models"]
    assert cfg.tables.querysets("table4") == cfg.tables.querysets("table4", setting="fine-tuned") == ["farrelevant"]


def test_a_table_of_any_name_with_a_layout_is_a_model_table_with_that_layouts_defaults():
    cfg = prepare(mutated(put("tables.firstp_only", {"layout": "baseline", "models": ["firstp"],
                                                     "columns": [{"queryset": "dev", "metric": "RR@10"}]})))
    assert "firstp_only" in cfg.tables.of_layout("baseline")
    assert cfg.tables["firstp_only"]["retriever_label"] == "BM25 (retriever)"


def test_baseline_table_without_models_shows_every_implemented_model():
    cfg = prepare(mutated(drop("tables.table7.models")))
    assert sorted(cfg.tables["table7"]["models"]) == cfg.models.names


def test_default_table_rows_do_not_depend_on_the_key_order_of_models():
    data = mutated(drop("tables.table1.models"))
    flipped = {**data, "models": dict(reversed(list(data["models"].items())))}
    assert prepare(data).tables.params("table1") == prepare(flipped).tables.params("table1")


EXTERNAL_RUN_ERRORS = [
    pytest.param(put("external_runs", {"maxp": {"label": "Theirs", "runs": {"dev": "a.run"}}}),
                 r"^external_runs\.maxp: the name is already a model's", id="name-of-a-model"),
    pytest.param(put("external_runs", {"theirs": {"label": "Theirs", "runs": {"train": "a.run"}}}),
                 r"^external_runs\.theirs\.runs: 'train' is not in rerank\.querysets", id="run-not-reranked"),
    pytest.param(put("external_runs", {"theirs": {"label": "Theirs", "runs": {"dev": "a.run"}, "baseline": "nope"}}),
                 r"^external_runs\.theirs\.baseline: 'nope' is not a configured model", id="baseline-unknown"),
]


@pytest.mark.parametrize(("mutations", "message"), EXTERNAL_RUN_ERRORS)
def test_external_run_check_names_the_key(mutations, message):
    check_rejects(mutations, message)


def test_external_run_may_not_take_a_models_label():
    check_rejects((put("models.maxp.label", "MaxP"),
                   put("external_runs", {"theirs": {"label": "MaxP", "runs": {"dev": "a.run"}}})),
                  r"^external_runs\.theirs\.label: 'MaxP'")


def test_folds_file_must_number_folds_from_one(tmp_path):
    (tmp_path / "gappy.tsv").write_text("q1\t1\nq2\t3\n", encoding="utf-8")
    (tmp_path / "good.tsv").write_text("q1\t1\nq2\t2\nq3\t3\nq4\t1\n", encoding="utf-8")
    cfg = prepare(mutated(with_robust(), put("querysets.robust.folds", str(tmp_path / "gappy.tsv")),
                          put("querysets.good", {"collection": "robust", "metrics": ["AP"],
                                                 "source": {"kind": "ir_datasets", "id": ROBUST},
                                                 "folds": str(tmp_path / "good.tsv")})))
    assert cfg.querysets.folds_count("good") == 3
    with pytest.raises(ConfigError, match=r"^querysets\.robust\.folds: .*gappy\.tsv must number its folds 1\.\.k, "
                                          r"got \[1, 3\]$"):
        cfg.querysets.folds_count("robust")


# --- warnings and skipped models -----------------------------------------------------------------


def test_a_longp_model_is_measured_against_its_firstp_twin():
    one_sequence = {**DEFAULT["models"]["maxp"]["args"], "stride": 24, "max_doc_tokens": 24}
    twin = {**DEFAULT["models"]["firstp"], "label": "FirstP (MiniLM, one sequence)", "ranker": "longp",
            "baseline": "firstp_twin", "args": one_sequence}
    long = {**twin, "label": "LongP (MiniLM, own twin)", "args": {**one_sequence, "chunk_tokens": 72, "stride": 72,
                                                         "max_doc_tokens": 72}}
    cfg = prepare(mutated(put("models.firstp_twin", twin), put("models.longp_own_twin", long)))
    assert cfg.models["longp_own_twin"].baseline == "firstp_twin" and cfg.warnings == []


def test_rankgpt_is_zero_shot_listwise_and_left_out_of_table11():
    cfg = prepare(fresh())
    assert set(cfg.models.listwise) == {"firstp_rankgpt", "longp_rankgpt"}
    assert cfg.models["longp_rankgpt"].zero_shot and "longp_rankgpt" not in cfg.models.trained
    assert "longp_rankgpt" not in cfg.models.zero_shot  # scored by a language model, not rerank_zero_shot
    assert cfg.models.seeds("longp_rankgpt") == [0]
    cfg = prepare(mutated(drop("tables.table11")))
    assert "table11" not in cfg.tables
    cfg = prepare(mutated(put("tables.table11", {})))
    assert not set(cfg.tables["table11"]["models"]) & set(cfg.models.listwise)
    check_rejects(put("tables.table11.models", ["maxp", "longp_rankgpt"]),
                  r"^tables\.table11\.models: 'longp_rankgpt' ranks through a language model")


def test_a_model_reranks_only_its_query_sets_and_tables_mark_the_others():
    cfg = prepare(fresh())
    assert cfg.models.reranked_querysets("longp_rankgpt") == ["test", "farrelevant"]
    assert ("longp_rankgpt", 0) not in cfg.tables.systems("dev") and ("longp_rankgpt", 0) in cfg.tables.systems("test")
    assert cfg.tables.params("table1")["models"]["longp_rankgpt"]["not_run"] == ["dev"]
    assert cfg.tables.params("table1")["models"]["maxp"]["not_run"] == []


LANGUAGE_MODEL_ERRORS = [
    pytest.param(put("models.longp_rankgpt.args.llm", "gpt5"),
                 r"^models\.longp_rankgpt\.args\.llm: 'gpt5' is not a key of llm\.models", id="unknown-llm"),
    pytest.param(put("models.longp_rankgpt.querysets", ["dev", "train"]),
                 r"^models\.longp_rankgpt\.querysets: \['train'\] not in rerank\.querysets", id="not-reranked"),
    pytest.param(put("models.longp_rankgpt.querysets", ["dev"]),
                 r"^models\.longp_rankgpt\.querysets: its baseline 'firstp_rankgpt' does not rerank \['dev'\]",
                 id="baseline-not-run"),
    pytest.param(put("models.longp_rankgpt.baseline", "firstp"),
                 r"^models\.longp_rankgpt\.baseline: a listwise model and its baseline 'firstp' must both be",
                 id="trained-baseline"),
    pytest.param(put("models.longp_rankgpt.args.step", 30),
                 r"^models\.longp_rankgpt\.args\.step: 30 is larger than the window", id="step-over-window"),
    pytest.param(put("models.longp_rankgpt.args.first_tokens", 24),
                 r"^models\.longp_rankgpt\.args: first_tokens and first_tokenizer go together", id="half-firstp"),
    pytest.param(put("models.longp_rankgpt.args.backbone", "gpt-4o-mini"),
                 r"models\.longp_rankgpt\.args\.backbone", id="chunk-argument"),
    pytest.param(put("llm.models.keep_order.wrapper", "none"),
                 r"^llm\.models\.keep_order\.wrapper: RankGPT \(firstp_rankgpt\) sends a conversation", id="wrapper"),
    pytest.param(put("llm.models.smollm2.api_key", "sk-123"), r"llm\.models\.smollm2\.api_key", id="key-in-config"),
    pytest.param(put("litm.models", ["nope"]), r"^litm\.models: 'nope' is not a key of llm\.models", id="litm-model"),
    pytest.param(put("litm.qa.sizes", [{"k": 5, "positions": [0, 5]}]),
                 r"^litm\.qa\.sizes\[0\]\.positions: \[5\] are not below k = 5", id="position-outside"),
    pytest.param(put("litm.kv.sizes", [{"n": 8, "positions": [0]}, {"n": 8, "positions": [7]}]),
                 r"^litm\.kv\.sizes: lists n = \[8, 8\] with repeats", id="repeated-size"),
]


@pytest.mark.parametrize(("mutations", "message"), LANGUAGE_MODEL_ERRORS)
def test_language_model_checks_name_the_key(mutations, message):
    check_rejects(mutations, message)


PROBE_ERRORS = [
    pytest.param(put("probes.scorers.firstp.model", "nope"), r"^probes\.scorers\.firstp\.model: 'nope' is not a key",
                 id="unknown-model"),
    pytest.param(put("probes.scorers.firstp.model", "firstp_e5"),
                 r"^probes\.scorers\.firstp\.model: 'firstp_e5' is never trained", id="zero-shot-model"),
    pytest.param(put("probes.scorers.firstp.seed", 7), r"^probes\.scorers\.firstp\.seed: 7 is not a training seed",
                 id="untrained-seed"),
    pytest.param(put("probes.scorers.minilm.score", "l2"), r"^probes\.scorers\.minilm", id="unknown-score"),
    pytest.param(put("probes.scorers.bm25.query_model", "x"), r"^probes\.scorers\.bm25\.query_model: unknown key",
                 id="dense-key-on-bm25"),
    pytest.param(put("probes.redocred.files", [{"path": "dev_revised.json", "split": "dev"}]),
                 r"^probes\.redocred: .* is not valid under any of the given schemas", id="files-and-synthetic"),
    pytest.param(put("probes.heatmap.length_bins", [90, 80, 200]), r"^probes\.heatmap\.length_bins: .* must increase",
                 id="bins-decrease"),
    pytest.param(put("probes.probes", ["position_first_last", "prior"]), r"^probes\.probes\[1\]: 'prior' is not one",
                 id="unknown-probe"),
    pytest.param(drop("probes.poison"), r"^probes\.probes: poison needs probes\.poison", id="poison-without-source"),
    pytest.param(put("probes.poison", {"source": "llm", "model": "gpt5"}),
                 r"^probes\.poison\.model: 'gpt5' is not a key of llm\.models", id="poison-model"),
    pytest.param(put("probes.poison", {"source": "file"}), r"^probes\.poison: 'path' is a required property",
                 id="poison-file-without-path"),
    pytest.param(put("probes.rag", {"readers": ["nope"], "judge": "smollm2"}),
                 r"^probes\.rag\.readers: 'nope' is not a key of llm\.models", id="rag-reader"),
    pytest.param((put("probes.rag", {"readers": ["smollm2"], "judge": "smollm2"}), put("probes.probes", ["foil"])),
                 r"^probes\.rag: RAG poisoning reads the poison probe's documents", id="rag-without-poison"),
]


@pytest.mark.parametrize(("mutation", "message"), PROBE_ERRORS)
def test_probe_checks_name_the_key(mutation, message):
    check_rejects(mutation, message)


def test_a_checkpoint_scorer_reads_its_models_first_seed_unless_told():
    cfg = prepare(fresh())
    assert cfg.probes.checkpoint("firstp") == "results/models/firstp/seed1" and cfg.probes.checkpoint("bm25") is None
    assert cfg.probes.label("firstp") == "FirstP" and cfg.probes.label("minilm") == "MiniLM (dot)"
    assert "label" not in cfg.probes.scorer("minilm") and cfg.probes.scorer("minilm")["max_tokens"] == 512
    cfg = prepare(mutated(put("training.seeds", [1, 2]), put("probes.scorers.firstp.seed", 2)))
    assert cfg.probes.checkpoint("firstp") == "results/models/firstp/seed2"


def test_missing_expansions_file_is_a_warning(tmp_path):
    (tmp_path / "present.jsonl").write_text("", encoding="utf-8")
    cfg = prepare(mutated(with_robust(), put("collections.robust.expansions", str(tmp_path / "absent.jsonl"))))
    assert len(cfg.warnings) == 1 and cfg.warnings[0].startswith("collections.robust.expansions: ")
    assert "absent.jsonl does not exist" in cfg.warnings[0]
    cfg = prepare(mutated(with_robust(), put("collections.robust.expansions", str(tmp_path / "present.jsonl"))))
    assert cfg.warnings == []


@pytest.mark.parametrize(("k", "warned"), [(9, False), (10, True), (11, True)])
def test_outcomes_k_not_below_the_rerank_depth_is_a_warning(k, warned):
    cfg = prepare(mutated(put("querysets.dev.depth", 10), put("querysets.farrelevant.depth", 20),
                          put("tables.outcomes", {"querysets": ["dev", "farrelevant"], "k": k})))
    assert [w.startswith("tables.outcomes.k: ") and "querysets.dev.depth (10)" in w for w in cfg.warnings] == \
        ([True] if warned else [])


# --- canonical params ----------------------------------------------------------------------------


def test_canonical_sorts_keys_recursively():
    value = canonical({"b": {"z": 1, "a": 2}, "a": [{"y": 1, "x": 2}]})
    assert list(value) == ["a", "b"] and list(value["b"]) == ["a", "z"] and list(value["a"][0]) == ["x", "y"]


def test_canonical_writes_integral_floats_as_ints_only():
    value = canonical({"a": 2.0, "b": [1.0, 0.5], "c": -0.0, "d": 1e-4})
    assert value == {"a": 2, "b": [1, 0.5], "c": 0, "d": 1e-4}
    assert [type(v) for v in (value["a"], value["b"][0], value["b"][1])] == [int, int, float]


def test_canonical_leaves_bools_none_and_strings_alone():
    value = canonical({"t": True, "f": False, "n": None, "s": "1.0"})
    assert value["t"] is True and value["f"] is False and value["n"] is None and value["s"] == "1.0"


def test_canonical_keeps_list_order_and_makes_tuples_lists():
    assert canonical([3, 1, 2]) == [3, 1, 2]
    assert canonical(("b", "a")) == ["b", "a"]


def test_canonical_prints_the_same_for_key_order_and_number_spelling():
    assert repr(canonical({"b": 1, "a": 2.0})) == repr(canonical({"a": 2, "b": 1}))


@pytest.mark.parametrize("order", [sorted, lambda keys: sorted(keys, reverse=True), shuffled],
                         ids=["sorted", "reversed", "shuffled"])
def test_key_order_does_not_change_what_jobs_receive(order):
    data = mutated(put("external_runs", {"theirs": {"label": "Theirs", "runs": {"farrelevant": "a.run", "dev": "b.run"},
                                                    "baseline": "firstp"}}),
                   put("models.maxp.training", {"epochs": 3, "precision": "fp32"}))
    assert derived(prepare(reordered(data, order))) == derived(prepare(data))


def test_number_spelling_does_not_change_what_jobs_receive():
    spelled = mutated(put("training.margin", 1), put("training.epochs", float(DEFAULT["training"]["epochs"])),
                      put("models.maxp.args.chunk_tokens", float(DEFAULT["models"]["maxp"]["args"]["chunk_tokens"])),
                      put("rerank.batch_size", 32.0))
    plain = mutated(put("training.margin", 1.0), put("rerank.batch_size", 32))
    assert derived(prepare(spelled)) == derived(prepare(plain))


def test_a_changed_value_does_change_what_jobs_receive():
    # guards the two tests above against a `derived` that would print the same for any config
    assert derived(prepare(mutated(put("models.maxp.lr", 1e-3)))) != derived(prepare(fresh()))


# --- what jobs receive ---------------------------------------------------------------------------


def test_training_params_layer_training_then_model_block_then_overrides():
    cfg = prepare(mutated(put("training.epochs", 2), put("training.batch_size", 4), put("training.grad_accum", 1),
                          put("models.maxp.training", {"epochs": 3, "precision": "fp32"})))
    assert cfg.models.training_params("parade_attn")["epochs"] == 2
    assert cfg.models.training_params("maxp")["epochs"] == 3 and cfg.models.training_params("maxp")["precision"] == "fp32"
    recipe = cfg.models.training_params("maxp", {"epochs": 4, "batch_size": 8})
    assert (recipe["epochs"], recipe["precision"], recipe["batch_size"], recipe["grad_accum"]) == (4, "fp32", 8, 1)
    assert "seeds" not in recipe and "queryset" not in recipe
    assert cfg.models.training_params("maxp", None) == cfg.models.training_params("maxp")


def test_a_pass_size_is_a_per_model_setting_of_every_recipe_layer():
    cfg = prepare(mutated(put("training.pass_pairs", 4),
                          put("models.maxp.training", {"one_pass": True, "pass_pairs": None}),
                          put("models.firstp.training", {"pass_pairs": 2}),
                          put("finetuning.training", {"one_pass": False, "pass_pairs": 8})))
    maxp = cfg.models.training_params("maxp")
    assert (maxp["one_pass"], maxp["pass_pairs"]) == (True, None)
    assert [cfg.models.training_params(m)["pass_pairs"] for m in ("parade_attn", "firstp")] == [4, 2]
    finetuning = cfg.finetuning.get("training")
    assert [cfg.models.training_params(m, finetuning)["pass_pairs"] for m in ("maxp", "firstp")] == [8, 8]
    assert "pass_pairs" not in prepare(fresh()).models.training_params("maxp")  # unset: no job's params change


@pytest.mark.parametrize("mutations,message", [
    ((put("training.one_pass", True), put("models.maxp.training", {"pass_pairs": 2})),
     r"^training\.one_pass and training\.pass_pairs \(2\) both set a step's pass size; keep one of them .*"
     r"\(in the recipe of models\.maxp\)$"),
    (put("models.maxp.training", {"pass_pairs": 0}), r"models\.maxp\.training\.pass_pairs"),
], ids=["with-one_pass", "zero"])
def test_an_impossible_pass_size_is_refused_by_name(mutations, message):
    check_rejects(mutations, message)


def test_seeds_and_training_queryset_do_not_reach_training_params():
    before = prepare(fresh())
    after = prepare(mutated(append("training.seeds", 99), put("training.queryset", "dev")))
    assert all(after.models.training_params(m) == before.models.training_params(m) for m in before.models.names)


def test_model_params_carry_ranker_args_and_rates_only():
    cfg = prepare(mutated(put("models.maxp.training", {"epochs": 3})))
    spec = DEFAULT["models"]["maxp"]
    assert cfg.models.params("maxp") == canonical({"ranker": "maxp", "args": spec["args"], "lr": spec["lr"],
                                                  "head_lr": spec["head_lr"]})


def test_scoring_uses_rerank_section_and_a_models_own_precision():
    cfg = prepare(mutated(put("rerank.precision", "bf16"), put("models.maxp.training", {"precision": "fp32"})))
    assert cfg.rerank.scoring("parade_attn") == {"batch_size": DEFAULT["rerank"]["batch_size"],
                                                 "device": DEFAULT["rerank"]["device"], "precision": "bf16",
                                                 "tf32": True, "compile": False, "packing": "auto"}
    assert cfg.rerank.scoring("maxp")["precision"] == "fp32"
    more = prepare(mutated(put("rerank.precision", "bf16"), append("rerank.querysets", "train")))
    assert more.rerank.scoring("parade_attn") == cfg.rerank.scoring("parade_attn")


def test_evaluation_params_are_a_querysets_metrics_and_relevance_level():
    cfg = prepare(mutated(put("querysets.test.rel_level", 2)))
    assert cfg.querysets.evaluation_params("test") == {"metrics": DEFAULT["querysets"]["test"]["metrics"], "rel_level": 2}


def test_tokenizer_store_cap_is_the_longest_document_budget_of_its_backbone():
    cfg = prepare(mutated(
        put("models.maxp.args.max_doc_tokens", 10_000),
        *(put(f"models.{m}.args", {"backbone": "org/other-bert", "max_query_tokens": 8, "chunk_tokens": chunk,
                                   "stride": chunk, "max_doc_tokens": budget, **extra})
          for m, chunk, budget, extra in [("parade_attn", 24, 48, {}),
                                          ("neural_model1", 12, 36, {"trust_remote_code": True})])))
    backbone = DEFAULT["models"]["firstp"]["args"]["backbone"]
    assert cfg.models.tokenizers == {
        cfg.models.tokenizer_of("firstp"): {"name": backbone, "cap": 10_000, "trust_remote_code": False},
        "org_other-bert": {"name": "org/other-bert", "cap": 48, "trust_remote_code": True},
    }
    assert cfg.models.tokenizer_of("maxp") == cfg.models.tokenizer_of("firstp") != cfg.models.tokenizer_of("parade_attn") == "org_other-bert"


def test_a_models_own_tokenizer_gets_its_own_store():
    cfg = prepare(mutated(put("models.parade_attn.args.tokenizer", "bert-base-uncased"),
                          put("models.parade_attn.args.max_doc_tokens", 60)))
    assert cfg.models.tokenizer_of("parade_attn") == "bert-base-uncased"
    assert cfg.models.tokenizers["bert-base-uncased"] == {"name": "bert-base-uncased", "cap": 60, "trust_remote_code": False}


def test_distinct_tokenizers_never_share_a_store():
    try:
        cfg = prepare(mutated(put("models.maxp.args.backbone", "org/bert"),
                              put("models.parade_attn.args.backbone", "org_bert")))
    except ConfigError:
        return  # refusing the clash is as good as keeping the stores apart
    assert cfg.models.tokenizer_of("maxp") != cfg.models.tokenizer_of("parade_attn")


def test_table_params_carry_only_the_alphas_of_the_tables_own_querysets():
    base = prepare(fresh())
    assert set(base.tables.params("table1")["querysets"]) == {c["queryset"]
                                                             for c in DEFAULT["tables"]["table1"]["columns"]}
    other = prepare(mutated(put("querysets.farrelevant.alpha", 0.2)))
    assert other.tables.params("table1") == base.tables.params("table1")
    assert other.tables.params("table4") != base.tables.params("table4")
    own = prepare(mutated(put("querysets.dev.alpha", 0.2)))
    assert own.tables.params("table1")["querysets"]["dev"] == {"alpha": 0.2}


def test_table_params_carry_only_external_runs_the_table_shows():
    cfg = prepare(mutated(put("external_runs", {"theirs": {"label": "Theirs", "runs": {"farrelevant": "a.run"}}})))
    assert cfg.tables.params("table1")["external"] == {}
    assert cfg.tables.params("table4")["external"] == {"theirs": {"label": "Theirs", "baseline": None,
                                                                 "querysets": ["farrelevant"]}}


def test_systems_add_the_external_rows_to_the_zero_shot_setting_only():
    cfg = prepare(mutated(put("training.seeds", [1, 2]),
                          put("external_runs", {"theirs": {"label": "Theirs", "runs": {"dev": "a.run"}}})))
    def models_on(queryset):  # RankGPT does not rerank dev
        return [(m, s) for m in cfg.models.names if cfg.models[m].reranks(queryset)
                for s in ((0,) if cfg.models[m].zero_shot else (1, 2))]

    models = models_on("dev")
    assert cfg.tables.systems("dev") == [("retriever", 0), ("random", 1), ("random", 2), *models, ("theirs", 0)]
    assert cfg.tables.systems("test") == [("retriever", 0), ("random", 1), ("random", 2), *models_on("test")]
    # the fine-tuned tables keep the retriever and random rows (nothing of theirs is fine-tuned), not the
    # zero-shot models
    trained = [(m, s) for m, s in models if not m.endswith("_e5")]
    assert cfg.tables.systems("dev", setting="eval-finetuned") == [("retriever", 0), ("random", 1), ("random", 2),
                                                                   *trained]


def test_zero_shot_models_have_one_run_and_no_fine_tuned_row():
    cfg = prepare(mutated(put("training.seeds", [1, 2])))
    assert cfg.models.zero_shot == ["firstp_e5", "longp_e5"]
    assert set(cfg.models.trained) == set(cfg.models.names) - {"firstp_e5", "longp_e5"} - set(cfg.models.listwise)
    assert cfg.models.seeds("longp_e5") == [0] and cfg.models.seeds("maxp") == [1, 2]
    assert [s for m, s in cfg.tables.systems("dev") if m == "longp_e5"] == [0]
    assert "longp_e5" not in {m for m, _ in cfg.tables.systems("farrelevant", setting="eval-finetuned")}
    assert cfg.tables.params("table4")["models"]["longp_e5"]["zero_shot"] is True


def test_excluded_seeds_are_trained_but_left_out_of_the_tables():
    cfg = prepare(mutated(put("training.seeds", [1, 2]), put("models.maxp.seeds", [1, 2, 3, 4]),
                          put("models.maxp.excluded_seeds", [2])))
    assert cfg.models["maxp"].trained_seeds(cfg.training.seeds) == [1, 2, 3, 4]
    assert cfg.models.seeds("maxp") == [1, 3, 4] and cfg.models.seeds("parade_attn") == [1, 2]
    assert [s for m, s in cfg.tables.systems("dev") if m == "maxp"] == [1, 3, 4]
    assert cfg.models.excluded_checkpoints == [("maxp", 2)]
    assert cfg.tables.params("table1")["models"]["maxp"]["excluded_seeds"] == [2]


def test_experiment_names_its_results_folder():
    assert prepare(fresh()).results_dir == "results"
    assert prepare(mutated(put("experiment", "ablation_1"))).results_dir == "results/ablation_1"


def test_a_geometry_beyond_the_backbones_position_embeddings_is_refused_when_the_graph_is_built():
    check_rejects((put("models.maxp.args.chunk_tokens", 600), put("models.maxp.args.max_doc_tokens", 600)),
                  r"^models\.maxp\.args: chunk_tokens \(600\) \+ max_query_tokens \(12\) \+ 3 special tokens = 615 "
                  r"positions, but backbone 'offline:all-MiniLM-L6-v2' has 512")


def test_an_inconsistent_fine_tuning_recipe_is_refused_naming_where_it_comes_from():
    check_rejects((put("finetuning.training.query_repeats", 3), put("finetuning.training.queries_per_epoch", 3)),
                  r"^training\.queries_per_epoch \(3\) and training\.query_repeats \(3\).*\(in the recipe of "
                  r"finetuning\.training for models\.")


def test_an_experiment_may_not_take_the_name_of_a_shared_results_directory():
    check_rejects((put("experiment", "eval"),), r"^experiment: 'eval' is a directory the workflow writes under results/")
    assert prepare(mutated(put("experiment", "mine"))).results_dir == "results/mine"


def test_table11_without_models_counts_every_model():
    cfg = prepare(mutated(put("tables.table11", {})))
    assert cfg.tables["table11"]["models"] == sorted(m for m in DEFAULT["models"] if "rankgpt" not in m)


def test_a_debiased_model_trains_on_its_own_copy_of_the_training_collection():
    cfg = prepare(fresh())
    assert cfg.models.debiased_collections == {"synthetic-debiased-k1-seed0": {"base": "synthetic", "n_splits": 1, "seed": 0}}
    assert cfg.models.training_collection("longp_debiased") == "synthetic-debiased-k1-seed0"
    assert cfg.models.training_collection("longp") == "synthetic"
    params = cfg.tables.params("table2")["models"]
    debiased = "longp_debiased"
    assert params[debiased]["debiased_from"] == "longp" and "debiased_from" not in params["longp"]
    assert cfg.models[debiased].args == cfg.models["longp"].args
    assert cfg.models[debiased].ranker == "longp"
    changed = prepare(mutated(put("models.longp.args.max_query_tokens", 10)))  # the original's change reaches
    assert changed.models[debiased].args["max_query_tokens"] == 10  # its de-biased twin
    shuffled_twice = prepare(mutated(put("models.nm1_debiased", {"label": "Neural Model 1 (de-biased)",
                                                                 "debias": {"original": "neural_model1", "n_splits": 3}})))
    assert sorted(shuffled_twice.models.debiased_collections) == ["synthetic-debiased-k1-seed0",
                                                           "synthetic-debiased-k3-seed0"]


@pytest.mark.parametrize("mutation, message", [
    (put("models.longp_debiased.debias.original", "nope"),
     r"^models\.longp_debiased\.debias\.original: 'nope' is not a configured model"),
    (put("models.longp_debiased.lr", 1.0e-3),
     r"^models\.longp_debiased: \['lr'\] belong to its original \(models\.longp\); a de-biased "
     r"model gives only"),
    (put("models.twice_debiased", {"label": "Twice", "debias": {"original": "longp_debiased"}}),
     r"^models\.twice_debiased\.debias\.original: 'longp_debiased' is itself de-biased"),
    (put("tables.table2.models", ["maxp"]), r"^tables\.table2\.models: 'maxp' has no models\.maxp\.debias"),
])
def test_a_debiased_model_must_be_its_original_trained_on_other_documents(mutation, message):
    check_rejects((mutation,), message)


def test_published_rows_must_name_the_tables_columns_and_an_ablation_its_reference():
    row = {"label": "Li et al. 2024", "source": "their Table 3", "values": {"dev RR@10": 0.4, "DL 2019": 0.6}}
    check_rejects((put("tables.table1.reference_rows", [row]),),
                  r"^tables\.table1\.reference_rows\[0\]\.values: \['DL 2019'\] are not headers of tables\.table1")
    ablation = {"models": ["maxp", "parade_attn"], "reference": "firstp",
                "columns": [{"queryset": "dev", "metric": "RR@10"}]}
    check_rejects((put("tables.table6", ablation),), r"^tables\.table6\.reference: 'firstp' is not among tables\.table6")
    assert prepare(mutated(put("tables.table6", {**ablation, "reference": "maxp"}))).tables.of_layout("ablation") == ["table6"]


def test_a_model_table_declares_its_layout_defaulted_by_the_schema():
    cfg = prepare(DEFAULT)
    assert {t: cfg.tables[t]["layout"] for t in cfg.tables.of_layout()} == {
        t: {"table2": "debias", "table3": "debias", "table6": "ablation"}.get(t, "baseline")
        for t in cfg.tables.of_layout()}
    assert "table1" in cfg.tables.of_layout("baseline") and "table4" not in cfg.tables.of_layout()
    with pytest.raises(ConfigError, match=r"^tables\.table1\.layout: 'baseline' was expected"):
        prepare(mutated(put("tables.table1.layout", "debias")))


# --- the stages' registry ------------------------------------------------------------------------------------------

REPORTING_STAGES = {"evaluation", "provenance", "litm", "probes", "sweep", "positions", "audit", "judges"}


def test_each_stage_s_rules_name_their_targets_as_the_snakefile_asks_for_them():
    """The Snakefile asks `rule all` for `<STAGE>_REPORTED` of each registered stage and takes a missing list as
    none: a list under another name would drop that stage's tables from the run without a word."""
    from posbias.config.registry import STAGES, reported_name, stage_rules

    defined = {}
    for path in stage_rules(ROOT):
        stage = Path(path).stem
        texts = [(ROOT / path).read_text()] + [p.read_text() for p in [ROOT / "rules" / "inputs" / f"{stage}.smk"]
                                               if p.exists()]
        defined[stage] = {name for text in texts for name in re.findall(r"^(\w+_REPORTED) = ", text, flags=re.M)}
    assert {stage: names for stage, names in defined.items() if names} == {
        stage: {reported_name(stage)} for stage in REPORTING_STAGES}
    assert REPORTING_STAGES <= set(STAGES)
    stray = {name for path in (ROOT / "rules").rglob("*.smk") if Path(path).stem not in defined
             for name in re.findall(r"^(\w+_REPORTED) = ", path.read_text(), flags=re.M)}
    assert stray == set(), "targets defined outside a stage's rules files"


def test_the_registry_finds_each_stage_s_modules_by_their_files():
    from posbias.config.registry import section_modules, stage_modules

    assert stage_modules("cli")[:3] == ["posbias.staging.cli", "posbias.data.cli", "posbias.farrelevant.cli"]
    assert "posbias.planning.config" not in section_modules()  # a stage without config sections
    assert section_modules()[-2:] == ["posbias.config.sections.revisions", "posbias.config.sections.reproduction"]
