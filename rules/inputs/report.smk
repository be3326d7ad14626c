# The names, paths and input functions of rules/report.smk (Snakemake's lint keeps functions out of a file
# with rules).

def statistics_input(wildcards):
    """The collection's token store when the rankers tokenise the same documents with the statistics'
    tokenizer (it holds every document's length); otherwise the documents, tokenised here."""
    tokenizer = TABLES["dataset_stats"]["tokenizer"]
    key, collection = tokenizer_key(tokenizer), wildcards.collection
    if TOKENIZERS.get(key, {}).get("name") == tokenizer and docs_of(collection) == source_docs_of(collection):
        return {"tokens": f"results/tokens/{collection}/{key}"}
    return {"docs": source_docs_of(collection)}


def table_outputs(name, caption, category="Tables"):
    """The four files of a table; the HTML one goes into the Snakemake report."""
    return {
        "tex": f"{OUT}/{name}.tex",
        "csv": f"{OUT}/{name}.csv",
        "md": f"{OUT}/{name}.md",
        "html": report(f"{OUT}/{name}.html", caption=f"../report/{caption}.rst", category=category,
                       labels={"table": name}),
    }


FIGURES = [f"{OUT}/figures/farrelevant.png", f"{OUT}/figures/farrelevant.pdf"] if "table4" in TABLES else []


def efficiency_runs():
    """(model, seed, query set) of every run the efficiency figure (the study's Figure 3) times: Table 1's models
    and their baselines on Table 1's zero-shot query sets that are reranked directly (a pooled one by its members;
    cross-validated ones are reranked by fold models, not by the checkpoint Table 1 names)."""
    if "table1" not in TABLES:
        return []
    shown = set()
    for qs in CFG.tables.querysets("table1"):
        shown |= set(QUERYSETS[qs].pool) if QUERYSETS[qs].pooled else {qs}
    querysets = [qs for qs in DIRECT_QUERYSETS if qs in shown]
    params = CFG.tables.params("table1")["models"]
    return [(m, s, qs) for m in params for s in CFG.models.seeds(m) for qs in querysets if CFG.models[m].reranks(qs)]


EFFICIENCY_RUNS = efficiency_runs()
EFFICIENCY_FIGURES = [f"{OUT}/figures/efficiency.png", f"{OUT}/figures/efficiency.pdf"] if EFFICIENCY_RUNS else []


REPORTED = [
    *(f"{OUT}/{t}.tex" for t in CFG.tables.of_layout("baseline")),
    *(f"{OUT}/{t}.tex" for t in [*CFG.tables.of_layout("debias"), *CFG.tables.of_layout("ablation")]),
    *([f"{OUT}/table4.tex"] if "table4" in TABLES else []),
    *FIGURES,
    *EFFICIENCY_FIGURES,
    *([f"{OUT}/first_stage.tex"] if "first_stage" in TABLES else []),
    *([f"{OUT}/outcomes.tex"] if "outcomes" in TABLES else []),
    *([f"{OUT}/table9.tex", f"{OUT}/table10.tex"] if "dataset_stats" in TABLES else []),
    *([f"{OUT}/table11.tex"] if "table11" in TABLES else []),
]
