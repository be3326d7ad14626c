"""posbias.rankers.catalog: the views of the rankers' declarations that the config, its schema and the docs read."""

import subprocess
import sys
from dataclasses import replace

import pytest

from posbias.config import schema as _schema
from posbias.rankers import catalog
from posbias.rankers.declaration import Argument, Chunking, RankerDeclaration
from posbias.rankers.declarations import DECLARATIONS
from posbias.rankers.declarations.base import POOLING


def test_every_ranker_is_declared_once():
    names = [declaration.name for declaration in DECLARATIONS]
    assert len(names) == len(set(names)) == len(catalog.ALL)


def test_the_sets_follow_each_rankers_declaration():
    assert catalog.LISTWISE == {"rankgpt"}
    assert catalog.ALL == catalog.IMPLEMENTED | catalog.LISTWISE and not catalog.IMPLEMENTED & catalog.LISTWISE
    assert catalog.DISJOINT_CHUNKS == {"cedr_knrm", "cedr_pacrr", "cedr_drmm", "neural_model1"}
    assert catalog.ONE_SEQUENCE == {"longp", "biencoder"}
    assert {"backbone", "stride", "pooling", "backbone_dtype"} <= catalog.CHUNK_ARGUMENTS
    assert catalog.arguments("maxp") == catalog.CHUNK_ARGUMENTS
    assert catalog.arguments("parade_transf_pretr_lateir") == catalog.CHUNK_ARGUMENTS | {"aggregator",
                                                                                          "interaction_model"}


def test_the_schema_enum_lists_every_declared_ranker_in_declaration_order():
    ranker = _schema()["properties"]["models"]["additionalProperties"]["properties"]["ranker"]
    assert ranker["enum"] == [declaration.name for declaration in DECLARATIONS]


def test_the_schema_argument_lists_are_the_declared_arguments():
    definitions = _schema()["$defs"]
    ranker_args = definitions["ranker_args"]
    assert set(ranker_args["properties"]) == set().union(*map(catalog.arguments, catalog.IMPLEMENTED)) | {"tokenizer"}
    assert ranker_args["required"] == ["backbone", "max_query_tokens", "chunk_tokens", "stride", "max_doc_tokens"]
    assert ranker_args["properties"]["pooling"] == {"type": "string", "enum": ["cls", "mean", "max"],
                                                    "description": POOLING.description}
    assert "default" not in ranker_args["properties"]["pooling"]  # a torch ranker's config stays as written
    rankgpt = definitions["rankgpt_args"]
    assert rankgpt["required"] == ["llm"] and set(rankgpt["properties"]) == catalog.arguments("rankgpt")
    assert rankgpt["properties"]["window"] == {"type": "integer", "minimum": 2, "default": 20}
    assert "default" not in rankgpt["properties"]["max_new_tokens"]
    assert rankgpt["description"].startswith("RankGPT")  # what the schema file says stays


def test_an_argument_two_rankers_declare_differently_is_refused():
    first = RankerDeclaration("one", "test", Chunking.ONE_SEQUENCE, (Argument("width", {"type": "integer"}),), "x:X")
    second = RankerDeclaration("two", "test", Chunking.ONE_SEQUENCE, (Argument("width", {"type": "number"}),), "x:Y")
    with pytest.raises(ValueError, match="ranker two: argument 'width' is declared unlike"):
        catalog._properties([first, second])
    assert catalog._properties([first, replace(first, name="three")]) == {"width": {"type": "integer"}}


def test_the_markdown_table_has_a_row_per_ranker_with_its_own_arguments():
    table = catalog.markdown_table().splitlines()
    assert table[0] == "| ranker | family | chunking | its own arguments |"
    rows = {line.split(" | ")[0].strip("| `"): line for line in table[2:]}
    assert list(rows) == [declaration.name for declaration in DECLARATIONS]
    assert rows["cedr_knrm"] == "| `cedr_knrm` | token interactions | disjoint chunks | - |"
    assert "`pooling` (`\"mean\"`)" in rows["biencoder"] and "`llm` (required): a key of llm.models" in rows["rankgpt"]
    shared = catalog.markdown_chunk_arguments()
    assert "| `backbone` | required | HF model directory or name" in shared and "| `tokenizer` | `null` |" in shared


def test_the_declarations_the_catalog_and_the_schema_load_without_torch():
    code = ("import sys; import posbias.config, posbias.rankers.registry; posbias.config.schema(); "
            "assert 'torch' not in sys.modules, sorted(m for m in sys.modules if m.startswith('torch'))")
    subprocess.run([sys.executable, "-c", code], check=True)
