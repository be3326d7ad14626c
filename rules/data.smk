# The data stage (posbias.data): collections in the standard formats, documents JSONL, queries TSV, TREC qrels.
# The generated collection (the embedded default) comes first; then collections read from a source (ir_datasets,
# Hugging Face datasets, local files), their truncation, de-biased copies and token stores. FarRelevant is built by
# rules/farrelevant.smk.

include: "inputs/data.smk"


if "generator" in config:

    rule generate_synthetic:
        """`results/data/synthetic/{docs.jsonl, queries/*.tsv, qrels/*.txt}` and the passage collection
        `results/data/synthetic-passages/`

        By hand: `posbias generate`"""
        output:
            queries=expand(data_paths.queries("synthetic", "{qs}"), qs=SYNTHETIC_QUERYSETS),
            qrels=expand(data_paths.qrels("synthetic", "{qs}"), qs=SYNTHETIC_QUERYSETS),
            positions=expand(data_paths.positions("synthetic", "{qs}"), qs=SYNTHETIC_QUERYSETS),
            passages=data_paths.docs(data_paths.PASSAGE_COLLECTION),
            passage_queries=data_paths.queries(data_paths.PASSAGE_COLLECTION, data_paths.PASSAGE_QUERYSET),
            passage_qrels=data_paths.qrels(data_paths.PASSAGE_COLLECTION, data_paths.PASSAGE_QUERYSET),
            passage_negatives=data_paths.passage_negatives(),
            # each query's answering passages, their qrels and known offsets (rules/positions.smk)
            answer_passages=data_paths.answer_passages_docs(),
            answer_qrels=expand(data_paths.qrels("synthetic/passages", "{qs}"), qs=SYNTHETIC_QUERYSETS),
            answer_positions=expand(data_paths.positions("synthetic/passages", "{qs}"), qs=SYNTHETIC_QUERYSETS),
            docs=data_paths.docs("synthetic"),
        params:
            settings=canonical(CFG.data["generator"]["settings"]),
            tokenizer=CFG.data["generator"]["tokenizer"],
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/data/generate_synthetic.log",
        script:
            "../scripts/generate_synthetic.py"


rule fetch_documents:
    """`results/data/{collection}/source/docs.jsonl` (ir_datasets, HF datasets, local files)

    By hand: `posbias fetch --collection`"""
    output:
        docs=data_paths.source_docs("{collection}"),
    params:
        source=lambda wc: canonical(COLLECTIONS[wc.collection]["documents"]),
    wildcard_constraints:
        collection=alternatives(COLLECTIONS),
    conda:
        "../envs/posbias.yaml"
    log:
        "logs/data/fetch_documents/{collection}.log",
    script:
        "../scripts/fetch_documents.py"


rule fetch_queryset:
    """`results/data/{collection}/{queries,qrels}/{queryset}.*`

    By hand: `posbias fetch --queryset`"""
    output:
        queries=data_paths.queries("{collection}", "{queryset}"),
        qrels=data_paths.qrels("{collection}", "{queryset}"),
    params:
        source=lambda wc: canonical(QUERYSETS[wc.queryset].source),
    wildcard_constraints:
        collection=alternatives(COLLECTIONS),
    conda:
        "../envs/posbias.yaml"
    log:
        "logs/data/fetch_queryset/{collection}/{queryset}.log",
    script:
        "../scripts/fetch_queryset.py"


rule fetch_folds:
    """`results/data/{collection}/folds/{queryset}.tsv`

    By hand: `posbias fetch --folds`"""
    output:
        folds=data_paths.folds("{collection}", "{queryset}"),
    params:
        folds=lambda wc: QUERYSETS[wc.queryset].folds,
    wildcard_constraints:
        collection=alternatives(COLLECTIONS),
    conda:
        "../envs/posbias.yaml"
    log:
        "logs/data/fetch_folds/{collection}/{queryset}.log",
    script:
        "../scripts/fetch_folds.py"


# The rankers read documents cut to N tokens of a named tokenizer (paper: 1431 BERT tokens);
# first-stage retrieval indexes the full documents.
rule truncate_documents:
    """`results/data/{collection}/docs.truncated.jsonl` (what the rankers read)

    By hand: `posbias truncate`"""
    input:
        docs=data_paths.source_docs("{collection}"),
    output:
        docs=data_paths.truncated_docs("{collection}"),
    params:
        tokenizer=lambda wc: COLLECTIONS[wc.collection]["truncate"]["tokenizer"],
        max_tokens=lambda wc: COLLECTIONS[wc.collection]["truncate"]["max_tokens"],
    wildcard_constraints:
        collection=alternatives([c for c, s in COLLECTIONS.items() if "truncate" in s]),
    conda:
        "../envs/posbias.yaml"
    log:
        "logs/data/truncate_documents/{collection}.log",
    script:
        "../scripts/truncate_documents.py"


# De-biased training documents (the study's RQ3): the whole source documents of the training collection, each cut
# at random word boundaries and reordered, for the models with `debias` (one copy per n_splits and seed).
rule debias_documents:
    """`results/data/{collection}/docs.jsonl`, a de-biased copy (each document rotated at a random word boundary)

    By hand: `posbias debias`"""
    input:
        docs=lambda wc: source_docs_of(DEBIASED[wc.collection]["base"]),
    output:
        docs=data_paths.docs("{collection}"),
    params:
        n_splits=lambda wc: DEBIASED[wc.collection]["n_splits"],
        seed=lambda wc: DEBIASED[wc.collection]["seed"],
    wildcard_constraints:
        collection=alternatives(DEBIASED),
    conda:
        "../envs/posbias.yaml"
    log:
        "logs/data/debias_documents/{collection}.log",
    script:
        "../scripts/debias_documents.py"


# The rankers' token ids: each collection tokenised once per ranker tokenizer into a store that
# training and reranking read by document id (src/posbias/data/token_store.py).
rule tokenize_documents:
    """`results/tokens/{collection}/{tokenizer}/` (token ids the rankers read, once per tokenizer)

    By hand: `posbias tokenize`"""
    input:
        docs=lambda wc: docs_of(wc.collection),
    output:
        store=directory(data_paths.tokens("{collection}", "{tokenizer}")),
    params:
        tokenizer=lambda wc: TOKENIZERS[wc.tokenizer]["name"],
        cap=lambda wc: TOKENIZERS[wc.tokenizer]["cap"],
        trust_remote_code=lambda wc: TOKENIZERS[wc.tokenizer]["trust_remote_code"],
    threads: 1  # raised by a profile (profiles/slurm); see the note at the top of rules/retrieval.smk
    conda:
        "../envs/posbias.yaml"
    log:
        "logs/data/tokenize_documents/{collection}/{tokenizer}.log",
    script:
        "../scripts/tokenize_documents.py"
