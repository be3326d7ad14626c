"""Evaluation by hand (rules/evaluate.smk): a run's metrics (trec_eval semantics, through ir_measures), two runs
compared query by query, and a pooled query set's values.

    posbias evaluate --qrels qrels.txt --run out.run --metric RR@10 --metric nDCG@10
    posbias evaluate --config config.yaml --queryset dev --system maxp --seed 1 --qrels ... --run ... \
        --per-query results/eval/dev/maxp/seed1.parquet          (the workflow's evaluate job)
    posbias compare --qrels qrels.txt --run a.run --run b.run --metric RR@10 [--json]
    posbias pool --config config.yaml --queryset trec_dl --values dl19.parquet dl20.parquet --out pooled.parquet
"""

from __future__ import annotations

import json
import sys

from posbias.command_flags import POSITIVE, SEED, add_command, named_block, read_config_object, reads
from posbias.errors import InputError

DEFAULT_METRICS = ["RR@10", "nDCG@10"]


def register(commands) -> None:
    ev = add_command(commands, "evaluate", evaluate, usage_check=_evaluate_usage,
                     help="evaluate a run (trec_eval semantics); prints JSON; an empty qrels or run, or a run with "
                          "no judged query, is an error")
    reads(ev, "--qrels", required=True)
    reads(ev, "--run", required=True)
    ev.add_argument("--metric", action="append", default=None,
                    help=f"ir_measures name, repeatable (default: the --config query set's metrics, else "
                         f"{' and '.join(DEFAULT_METRICS)})")
    ev.add_argument("--per-query", help="also write per-query values to this Parquet file")
    ev.add_argument("--rel-level", type=POSITIVE, default=None,
                    help="lowest grade that counts as relevant (trec_eval -l; default: the --config query set's, "
                         "else 1); nDCG keeps graded gains; a level above every grade in the qrels is warned about")
    ev.add_argument("--config", help="with --queryset: take its metrics and relevance level from the config")
    ev.add_argument("--queryset", help="the query set the run answers (a key of --config's querysets)")
    ev.add_argument("--system", help="label the per-query rows with this system (a model, retriever, random, "
                                     "...) and --seed and --queryset, as the workflow's evaluate job does")
    ev.add_argument("--seed", type=SEED, default=0, help="the run's seed, with --system")

    cmp = add_command(commands, "compare", compare, usage_check=_compare_usage,
                      help="compare two runs query by query (paired tests, outcome breakdown); prints a summary "
                           "table, or every number as JSON with --json; an empty qrels or run, or a run with no "
                           "judged query, is an error")
    reads(cmp, "--qrels", required=True)
    reads(cmp, "--run", action="append", required=True, help="given twice: run A, then run B")
    cmp.add_argument("--metric", default="RR@10", help="ir_measures name of the metric to test")
    cmp.add_argument("--k", type=POSITIVE, default=100, help="cut-off of the outcome breakdown (RR@k)")
    cmp.add_argument("--seed", type=SEED, default=0, help="seed of the randomisation test")
    cmp.add_argument("--permutations", type=POSITIVE, default=10000, help="sign flips of the randomisation test")
    cmp.add_argument("--rel-level", type=POSITIVE, default=1, help="lowest grade that counts as relevant")
    cmp.add_argument("--json", action="store_true", help="print the full result as one JSON object")

    pool_ = add_command(commands, "pool", pool,
                        help="a pooled query set's per-query values of one system: its members' stacked, each query "
                             "id prefixed with its member's name (the workflow's pool_evaluations job)")
    pool_.add_argument("--config", default="config.yaml")
    pool_.add_argument("--queryset", required=True, help="a pooled query set of --config (querysets.<name>.pool)")
    reads(pool_, "--values", nargs="+", required=True,
          help="each member's per-query values of the system (posbias evaluate --per-query), in the pool's order")
    pool_.add_argument("--out", required=True, help="the pooled values (Parquet)")


def warn(command: str, message: str) -> None:
    print(f"posbias {command}: warning: {message}", file=sys.stderr)


def _evaluate_usage(args) -> str | None:
    if (args.config or args.system) and not args.queryset:
        return "--config and --system need --queryset (the query set the run answers)"
    if args.system and not args.per_query:
        return "--system labels the rows of --per-query; give it too"
    if args.queryset and not (args.config or args.system):
        return "--queryset goes with --config (its metrics) or --system (the rows' labels)"
    return None


def _compare_usage(args) -> str | None:
    if len(args.run) != 2:
        return f"--run must be given exactly twice (run A, run B), not {len(args.run)} times"
    return None


def _judged_runs(command: str, qrels_path: str, run_paths: list[str], rel_level: int):
    """The qrels and each run, refusing an empty file and a run none of whose queries is judged (there would
    be nothing to evaluate), and warning when `rel_level` is above every grade (binary metrics all 0)."""
    from posbias.io import nonempty, read_qrels, read_run

    qrels = nonempty(read_qrels(qrels_path), qrels_path, "judgments")
    highest = max(grade for judged in qrels.values() for grade in judged.values())
    if rel_level > highest:
        warn(command, f"--rel-level {rel_level} is above every grade in {qrels_path} (the highest is {highest}): "
                       f"no document counts as relevant, so RR, AP, P, R and other binary metrics are 0")
    runs = []
    for path in run_paths:
        run = nonempty(read_run(path), path, "results")
        if not any(qid in qrels for qid in run):
            raise InputError(f"{path}: none of its {len(run)} queries is judged in {qrels_path}")
        runs.append(run)
    return qrels, runs


def evaluate(args) -> None:
    """`posbias evaluate`: mean of each metric over the queries both judged and in the run, as JSON."""
    from posbias.evaluation.metrics import parse_metrics, per_query
    from posbias.steps.evaluate import write_parquet

    metrics, rel_level = args.metric or DEFAULT_METRICS, args.rel_level or 1
    if args.config:
        config = read_config_object(args.config)
        named_block(config.data, "querysets", args.queryset, args.config, "--queryset")
        job = config.querysets.evaluation_params(args.queryset)  # what the workflow's evaluate job gets
        metrics, rel_level = args.metric or job["metrics"], args.rel_level or job["rel_level"]
    parse_metrics(metrics)  # a misspelt metric fails before the files are read
    qrels, (run,) = _judged_runs("evaluate", args.qrels, [args.run], rel_level)
    frame = per_query(qrels, run, metrics, rel_level=rel_level)
    summary = frame.groupby("metric", sort=False)["value"].mean().to_dict()
    summary["n_queries"] = int(frame["qid"].nunique())
    if args.per_query:
        if args.system:  # the evaluate job's labels (posbias.steps.evaluate.evaluate_run)
            frame = frame.assign(system=args.system, seed=args.seed, queryset=args.queryset)
        write_parquet(frame, args.per_query)
    print(json.dumps(summary))


def compare(args) -> None:
    result = _compare(args)
    print(json.dumps(result, allow_nan=False) if args.json else _compare_summary(result))


def _compare(args) -> dict:
    """`posbias compare`: run A against run B on the queries evaluated for both."""
    from posbias.evaluation.metrics import parse_metrics, per_query
    from posbias.stats.outcomes import outcome_breakdown, rank_sum_p
    from posbias.stats.paired import compare_paired, json_number

    cutoff = f"RR@{args.k}"
    metrics = list(dict.fromkeys([args.metric, cutoff]))  # the metric may be RR@k itself
    parse_metrics(metrics)  # a misspelt metric fails before the files are read
    qrels, runs = _judged_runs("compare", args.qrels, args.run, args.rel_level)
    values = []
    for run in runs:
        frame = per_query(qrels, run, metrics, rel_level=args.rel_level)
        values.append({name: group.set_index("qid")["value"] for name, group in frame.groupby("metric")})
    a, b = values
    qids_a, qids_b = set(a[cutoff].index), set(b[cutoff].index)
    common = sorted(qids_a & qids_b)
    if not common:
        raise InputError(f"no judged query is in both {args.run[0]} and {args.run[1]}")
    n_only_a, n_only_b = len(qids_a - qids_b), len(qids_b - qids_a)
    if n_only_a or n_only_b:
        # A query a run did not answer at all is skipped (trec_eval without -c); pairing needs both.
        warn("compare", f"{n_only_a} queries evaluated only for {args.run[0]} and {n_only_b} only for "
                         f"{args.run[1]}; comparing the {len(common)} evaluated for both")
    metric_a, metric_b = a[args.metric].loc[common], b[args.metric].loc[common]
    return {
        "metric": args.metric,
        "run_a": args.run[0],
        "run_b": args.run[1],
        **compare_paired(metric_a, metric_b, args.permutations, args.seed).to_dict(),
        "wilcoxon_rank_sum": {"p": json_number(rank_sum_p(metric_a, metric_b))},
        "outcomes": outcome_breakdown(a[cutoff].loc[common], b[cutoff].loc[common], args.k).to_dict(),
        # queries evaluated for one run only (it returned nothing for them), left out of every test
        "unpaired_queries": {"only_in_a": n_only_a, "only_in_b": n_only_b},
    }


def _compare_summary(result: dict) -> str:
    """The `compare` result (`_compare`) as three aligned tables; `--json` has every number."""
    import pandas as pd

    def num(value, digits: int = 4) -> str:
        return "n/a" if value is None else f"{value:.{digits}f}"  # None: undefined (nan) in the result

    def p(value, prefix: str = "") -> str:
        return "no test" if value is None else prefix + num(value)  # None: every pair tied: nothing to test

    def table(title: str, columns: dict, rows: list[str]) -> str:
        frame = pd.DataFrame(columns, index=rows)
        frame.columns.name = title  # printed in the header's first cell
        return frame.to_string()

    unpaired, outcomes, both = result["unpaired_queries"], result["outcomes"], result["outcomes"]["both"]
    left_out = (f"; left out: {unpaired['only_in_a']} evaluated only for A, {unpaired['only_in_b']} only for B"
                if unpaired["only_in_a"] or unpaired["only_in_b"] else "")
    low, high = result["ci95"]
    randomisation = result["randomisation"]
    outcome_names = {"neither": "neither", "only_a": "only A", "only_b": "only B", "both": "both"}
    return "\n".join([
        f"A: {result['run_a']}",
        f"B: {result['run_b']}",
        f"{result['n_queries']} queries evaluated for both{left_out}",
        "",
        table(result["metric"], {"A": [num(result["mean_a"])], "B": [num(result["mean_b"])],
                                 "A - B": [num(result["mean_difference"])],
                                 "95% CI of A - B": [f"[{num(low)}, {num(high)}]"],
                                 "effect size": [num(result["effect_size"], 2)]}, ["mean"]),
        "",
        table(f"paired test of {result['metric']}",
              {"p": [p(result["t_test"]["p"]), p(result["wilcoxon_signed_rank"]["p"]), p(randomisation["p"]),
                     p(result["wilcoxon_rank_sum"]["p"])]},
              ["t-test", "Wilcoxon signed-rank",
               f"randomisation ({randomisation['permutations']} sign flips, seed {randomisation['seed']})",
               "Wilcoxon rank-sum (unpaired)"]),
        "",
        table(f"relevant in top {outcomes['k']}",
              {"queries": [outcomes["counts"][key] for key in outcome_names],
               "share": [f"{100 * (outcomes['shares'][key] or 0):.1f}%" for key in outcome_names]},
              list(outcome_names.values())),
        f"only A against only B (binomial test): {p(outcomes['binomial_p'], 'p ')}",
        f"where both find one, mean rank of the first relevant document: A {num(both['esl_a'], 2)}, "
        f"B {num(both['esl_b'], 2)} "
        f"(Wilcoxon {p(both['esl_wilcoxon_p'], 'p ')}, t-test {p(both['esl_t_p'], 'p ')})",
    ])




def pool(args) -> None:
    from posbias.steps.evaluate import pool_values

    config = read_config_object(args.config)
    named_block(config.data, "querysets", args.queryset, args.config, "--queryset")
    spec = config.querysets[args.queryset]
    if not spec.pooled:
        raise InputError(f"--queryset {args.queryset}: querysets.{args.queryset} in {args.config} is not pooled")
    if len(args.values) != len(spec.pool):
        raise InputError(f"--values: one file per member of the pool ({', '.join(spec.pool)}), in that order; "
                         f"got {len(args.values)}")
    pool_values(args.values, list(spec.pool), list(spec.metrics), args.queryset, args.out)
