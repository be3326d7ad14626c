# The names, paths and input functions of rules/evaluation.smk (Snakemake's lint keeps functions out of a file
# with rules).

# --- evaluate

def pool_members_evaluated(wildcards):
    return [evaluated(member, wildcards.system, wildcards.seed) for member in QUERYSETS[wildcards.queryset].pool]


# --- report

def statistics_input(wildcards):
    """The collection's token store when the rankers tokenise the same documents with the statistics'
    tokenizer (it holds every document's length); otherwise the documents, tokenised here."""
    tokenizer = TABLES["dataset_stats"]["tokenizer"]
    key, collection = tokenizer_key(tokenizer), wildcards.collection
    if TOKENIZERS.get(key, {}).get("name") == tokenizer and docs_of(collection) == source_docs_of(collection):
        return {"tokens": data_paths.tokens(collection, key)}
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


EFFICIENCY_RUNS = CFG.tables.efficiency_runs()
EFFICIENCY_FIGURES = [f"{OUT}/figures/efficiency.png", f"{OUT}/figures/efficiency.pdf"] if EFFICIENCY_RUNS else []


EVALUATION_REPORTED = [
    *(f"{OUT}/{t}.tex" for t in CFG.tables.by_layout()),
    *([f"{OUT}/table4.tex"] if "table4" in TABLES else []),
    *FIGURES,
    *EFFICIENCY_FIGURES,
    *([f"{OUT}/first_stage.tex"] if "first_stage" in TABLES else []),
    *([f"{OUT}/outcomes.tex"] if "outcomes" in TABLES else []),
    *([f"{OUT}/table9.tex", f"{OUT}/table10.tex"] if "dataset_stats" in TABLES else []),
    *([f"{OUT}/table11.tex"] if "table11" in TABLES else []),
]
