# The names, paths and input functions of rules/positions.smk (Snakemake's lint keeps functions out of a file
# with rules).

from posbias.positions import paths as position_paths
from posbias.positions.paths import GENERATOR_PASSAGES, judges_paths, report_paths as positions_report_paths

POSITIONS = CFG.positions.data
POSITION_SETS = CFG.positions.sets
SPARSE_SETS = CFG.positions.sparse
DENSE_SETS = CFG.positions.dense
POSITION_TABLE, POSITION_FIGURES, POSITION_AGREEMENT = positions_report_paths(f"{OUT}/positions")
POSITION_JUDGES = judges_paths(f"{OUT}/positions")
POSITIONS_REPORTED = ([*POSITION_TABLE.values(), *(p for paths in POSITION_FIGURES.values() for p in paths),
                       POSITION_AGREEMENT, *POSITION_JUDGES.values()] if POSITIONS else [])


def position_set_inputs(wildcards):
    """A set's documents, queries and qrels; its relevant passages (sparse: what is matched; dense: what a mock
    oracle judge reads); the passage query set's queries; and the Lucene index the passages search (sparse)."""
    spec = POSITION_SETS[wildcards.pset]
    queryset = spec["queryset"]
    inputs = {"docs": source_docs_of(collection_of(queryset)), "queries": queries_of(queryset),
              "qrels": qrels_of(queryset)}
    passages = spec.get("passages")
    if passages == "generator":
        inputs.update(passages=f"{GENERATOR_PASSAGES}/docs.jsonl",
                      passage_qrels=f"{GENERATOR_PASSAGES}/qrels/{queryset}.txt")
    elif passages:
        inputs.update(passages=source_docs_of(collection_of(passages)), passage_qrels=qrels_of(passages),
                      passage_queries=queries_of(passages))
    if spec["kind"] == "sparse" and POSITIONS["matching"]["bm25_depth"]:
        inputs["index"] = lucene_index_of(collection_of(queryset))
    return inputs


def position_truth():
    """Set -> the generator's known answer offsets, for sets on the embedded collection."""
    return {name: f"{GENERATOR_PASSAGES}/positions/{spec['queryset']}.tsv" for name, spec in POSITION_SETS.items()
            if "generator" in CFG.data and collection_of(spec["queryset"]) == "synthetic"}


def position_report_outputs():
    """The table, figures, agreement CSV and the judges' order check table; the HTML tables and PNG figures go into
    the Snakemake report."""
    outputs = {fmt: report(path, caption="../report/positions_table.rst", category="First relevant position")
               if fmt == "html" else path for fmt, path in POSITION_TABLE.items()}
    outputs.update({f"judges_{fmt}": report(path, caption="../report/positions_judges.rst",
                                            category="First relevant position")
                    if fmt == "html" else path for fmt, path in POSITION_JUDGES.items()})
    for name, (png, pdf) in POSITION_FIGURES.items():
        outputs[f"{name}_png"] = report(png, caption=f"../report/positions_{name}.rst",
                                        category="First relevant position")
        outputs[f"{name}_pdf"] = pdf
    outputs["agreement"] = POSITION_AGREEMENT
    return outputs
