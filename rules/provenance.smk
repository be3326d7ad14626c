# Provenance (posbias.provenance): one manifest per results directory, written after everything else that
# `rule all` asks for. It records the code (git commit, uncommitted changes), the lock file's hash, the Python,
# package, Java and CUDA versions, the config's hash, the pretrained weights' revisions or content hashes, the
# language models, the config's departures from the paper, each checkpoint's sidecar (device, precision, its own
# config hash), each run's device and precision, and every file under results/ with its sha256. Its inputs are rule all's other targets, so it
# reruns only when one of them is rebuilt or the config changes (params), never on a plain re-invocation.


from posbias.provenance.manifest import manifest_params

PROVENANCE = {"json": f"{OUT}/provenance.json", "html": f"{OUT}/provenance.html"}
PROVENANCE_REPORTED = list(PROVENANCE.values())


rule provenance:
    """`results/[{experiment}/]provenance.{json,html}` (the last job)

    By hand: `posbias provenance --write`"""
    localrule: True
    input:
        # everything rule all asks for but the manifest (read when the graph is built: a target added to rule all
        # later is covered without an edit here)
        lambda wc: [path for path in rules.all.input if path not in PROVENANCE_REPORTED],
    output:
        json=PROVENANCE["json"],
        html=report(PROVENANCE["html"], caption="../report/provenance.rst", category="Provenance"),
    params:
        **manifest_params(CFG),
    conda:
        "../envs/posbias.yaml"
    log:
        "logs/report/provenance.log",
    script:
        "../scripts/provenance.py"
