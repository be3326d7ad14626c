# First stage: Lucene BM25 through pyserini, hybrid dense (FAISS) + BM25 fusion, runs given by the
# user, and the random-shuffle baseline. Candidate runs: results/candidates/{retriever}/{queryset}/top{depth}.run
#
# Every rule here asks for one thread; a profile raises them where collections are large (profiles/slurm sets
# 8), or `--set-threads bm25_retrieve=8` does on one machine. A two-thread job on `-j 2` waits until no
# one-thread job holds a core, and everything downstream waits with it: in `make demo` a Lost-in-the-Middle
# job held one core for 70 s while the Lucene jobs that training needs stood still.

include: "inputs/retrieval.smk"


rule bm25_index:
    """`results/index/{collection}/lucene` (pyserini; doc2query text joined first)

    By hand: `posbias index`"""
    input:
        unpack(expansions_input),
        docs=lambda wc: source_docs_of(wc.collection),
    output:
        index=directory(retrieval_paths.lucene_index("{collection}")),
    params:
        expansions=lambda wc: COLLECTIONS.get(wc.collection, {}).get("expansions"),
        expansions_sha256=lambda wc: COLLECTIONS.get(wc.collection, {}).get("expansions_sha256"),
    threads: 1
    conda:
        "../envs/posbias.yaml"
    log:
        "logs/retrieval/bm25_index/{collection}.log",
    script:
        "../scripts/bm25_index.py"


rule bm25_retrieve:
    """`results/candidates/{retriever}/{queryset}/top{depth}.run`

    By hand: `posbias retrieve`"""
    input:
        index=lambda wc: lucene_index_of(collection_of(wc.queryset)),
        queries=lambda wc: queries_of(wc.queryset),
    output:
        run=retrieval_paths.candidates("{retriever}", "{queryset}", "{depth}"),
    params:
        depth=lambda wc: int(wc.depth),
        k1=lambda wc: canonical(RETRIEVERS[wc.retriever]["k1"]),
        b=lambda wc: canonical(RETRIEVERS[wc.retriever]["b"]),
        tag=lambda wc: wc.retriever,
    wildcard_constraints:
        retriever=alternatives(CFG.retrievers.of_kind("bm25")),
    threads: 1
    conda:
        "../envs/posbias.yaml"
    log:
        "logs/retrieval/bm25_retrieve/{retriever}/{queryset}/top{depth}.log",
    script:
        "../scripts/bm25_retrieve.py"


# A dense index is two jobs: the GPU encodes the collection into a memory-mapped matrix, and a CPU job builds the
# FAISS index from it (other faiss settings reuse the vectors). Each keeps its work in progress in a `.partial`
# sibling of its output, which no rule declares: Snakemake deletes a failed job's outputs, not that, so the same
# command after a kill or a time-out resumes from the last saved chunk (posbias.retrieval.partial).
rule dense_encode:
    """`results/vectors/{collection}/{retriever}/` (`vectors.npy`, a float32 matrix, memory-mapped; `doc_ids.json`;
    `metadata.json`; `{retriever}.partial/` while it runs), on the GPU

    By hand: `posbias dense-index` (both steps)"""
    input:
        docs=lambda wc: source_docs_of(wc.collection),
    output:
        vectors=directory(retrieval_paths.dense_vectors("{collection}", "{retriever}")),
    params:
        encoder=lambda wc: canonical(RETRIEVERS[wc.retriever]["encoder"]),
    wildcard_constraints:
        retriever=alternatives(CFG.retrievers.of_kind("hybrid")),
    threads: 1
    resources:
        gpu=GPU_JOB,
    conda:
        "../envs/posbias.yaml"
    log:
        "logs/retrieval/dense_encode/{collection}/{retriever}.log",
    script:
        "../scripts/dense_encode.py"


rule dense_index:
    """`results/index/{collection}/dense/{retriever}` (FAISS, built on the CPU from the vectors;
    `{retriever}.partial/` while it runs)

    By hand: `posbias dense-index`"""
    input:
        vectors=retrieval_paths.dense_vectors("{collection}", "{retriever}"),
    output:
        index=directory(retrieval_paths.dense_index("{collection}", "{retriever}")),
    params:
        faiss=lambda wc: canonical(RETRIEVERS[wc.retriever]["faiss"]),
    wildcard_constraints:
        retriever=alternatives(CFG.retrievers.of_kind("hybrid")),
    threads: 1
    conda:
        "../envs/posbias.yaml"
    log:
        "logs/retrieval/dense_index/{collection}/{retriever}.log",
    script:
        "../scripts/dense_index.py"


rule hybrid_retrieve:
    """the same, from the dense k-NN re-scored with BM25

    By hand: `posbias hybrid`"""
    input:
        dense=lambda wc: retrieval_paths.dense_index(collection_of(wc.queryset), wc.retriever),
        lucene=lambda wc: lucene_index_of(collection_of(wc.queryset)),
        queries=lambda wc: queries_of(wc.queryset),
    output:
        run=retrieval_paths.candidates("{retriever}", "{queryset}", "{depth}"),
    params:
        depth=lambda wc: int(wc.depth),
        encoder=lambda wc: canonical(RETRIEVERS[wc.retriever]["encoder"]),
        weight=lambda wc: canonical(RETRIEVERS[wc.retriever]["weight"]),
        bm25=lambda wc: canonical({k: RETRIEVERS[RETRIEVERS[wc.retriever]["bm25"]][k] for k in ("k1", "b")}),
        tag=lambda wc: wc.retriever,
    wildcard_constraints:
        retriever=alternatives(CFG.retrievers.of_kind("hybrid")),
    threads: 1
    resources:
        gpu=GPU_JOB,
    conda:
        "../envs/posbias.yaml"
    log:
        "logs/retrieval/hybrid_retrieve/{retriever}/{queryset}/top{depth}.log",
    script:
        "../scripts/hybrid_retrieve.py"


rule import_run:
    """`results/candidates/given/{queryset}/top{depth}.run` (`querysets.<name>.candidates`)

    By hand: `posbias import-run`"""
    input:
        run=lambda wc: QUERYSETS[wc.queryset].candidates,
        queries=lambda wc: queries_of(wc.queryset),
    output:
        run=retrieval_paths.candidates(names.GIVEN, "{queryset}", "{depth}"),
    params:
        depth=lambda wc: int(wc.depth),
    wildcard_constraints:
        queryset=alternatives([q for q, s in QUERYSETS.items() if s.candidates]),
    conda:
        "../envs/posbias.yaml"
    log:
        "logs/retrieval/import_run/{queryset}/top{depth}.log",
    script:
        "../scripts/import_run.py"


rule random_shuffle:
    """`results/runs/{queryset}/random/seed{seed}.run`

    By hand: `posbias shuffle`"""
    input:
        candidates=lambda wc: candidates_of(wc.queryset),
    output:
        run=rerank_paths.run("{queryset}", "random", "{seed}"),
    params:
        seed=lambda wc: int(wc.seed),
    wildcard_constraints:
        queryset=alternatives(RERANK_QUERYSETS),
    conda:
        "../envs/posbias.yaml"
    log:
        "logs/retrieval/random_shuffle/{queryset}/seed{seed}.log",
    script:
        "../scripts/random_shuffle.py"
