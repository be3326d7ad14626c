# LLM judges (posbias.judges): the reproduction of "Judging the Judges" (Shi et al., arXiv 2406.07791) from the
# judgments its authors released, shipped with the package as records: the figures their pipeline printed (typed
# into config/reference/judging_the_judges.yaml) against the same figures recomputed here, with the position
# consistency, preference fairness, order kappa and repetition stability of every judge, and every judge aggregated
# as the paper's tables aggregate (beside the paper's figures where typed into the same file). A judge is audited like
# any other model (rules/audit.smk, the judge battery). One local job of seconds, in every run that audits.

from posbias.judges.reproduction import REFERENCE as JUDGES_REFERENCE
from posbias.workflow import workflow_root

JUDGES_OUT = f"{OUT}/judges"
JUDGES_REPRODUCTION = {"csv": f"{JUDGES_OUT}/reproduction.csv", "averages": f"{JUDGES_OUT}/reproduction.averages.csv",
                       "md": f"{JUDGES_OUT}/reproduction.md"}
JUDGES_REPORTED = list(JUDGES_REPRODUCTION.values()) if AUDIT_JOBS else []


rule judges_reproduction:
    """`results/judges/reproduction.{csv,averages.csv,md}` (the released judgments' printed figures, reproduced;
    every judge as the paper aggregates)

    By hand: `posbias judges reproduce`"""
    localrule: True
    input:
        # the workflow's own copy (a checkout's or the wheel's), wherever the run directory is
        reference=str(workflow_root() / JUDGES_REFERENCE),
    output:
        **JUDGES_REPRODUCTION,
    conda:
        "../envs/posbias.yaml"
    log:
        "logs/judges/reproduction.log",
    script:
        "../scripts/judges_reproduction.py"
