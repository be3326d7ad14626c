"""What a result rests on, by hand (rules/provenance.smk; `make demo`'s last step): the provenance of the code,
the environment and a config, its manifest written as the workflow writes it, and the regression check of a
results directory's headline cells.

    posbias provenance [--config config.yaml]      (the environment, and a config's hash, as manifests record them)
    posbias provenance --config config.yaml --write   (results/[<experiment>/]provenance.{json,html}, the last job)
    posbias regress --results results --expected config/regression/demo.yaml [--write-expected]
    posbias regress --results seed1 seed2 seed3 --expected config/regression/seeds.yaml --write-expected
    posbias regress --reproduction --config config/paper/study.yaml [--results results/study]
    posbias unlock-stale [--directory .]      (before snakemake: clear a lock a killed run left, never a live one's)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from posbias.command_flags import add_command, read_config, read_config_object


def register(commands) -> None:
    unlock = add_command(commands, "unlock-stale", unlock_stale,
                         help="remove the Snakemake lock of a run killed outright (SIGKILL, out of memory, a lost "
                              "node), when no Snakemake process runs in the directory; a live run's lock stays")
    unlock.add_argument("--directory", default=".", help="the workflow's working directory (default: .)")

    prov = add_command(commands, "provenance", provenance, usage_check=_provenance_usage,
                       help="print what made a result (JSON): git commit and uncommitted changes, the lock file's "
                            "sha256, Python, package, Java and CUDA versions; with --config also its hash, its "
                            "weights' hashes and its language models (as results/provenance.json records them)")
    prov.add_argument("--config", help="a config file: print its hash (compare with a manifest's config_hash)")
    prov.add_argument("--write", action="store_true",
                      help="with --config: write its results directory's manifest (provenance.json and .html, "
                           "every file under results/ hashed) as the workflow's provenance job does")
    prov.add_argument("--results", default="results", help="with --write: the results root (default: results)")

    reg = add_command(commands, "regress", regress, usage_check=_regress_usage,
                      help="check a results directory's headline cells against expected values (one pass/fail "
                           "table; exit status 1 when a cell fails), refresh those values (--write-expected), or "
                           "set a paper config's tables beside its published numbers (--reproduction)")
    reg.add_argument("--results", nargs="+", help="the results directory (default: results/, or the --config "
                     "experiment's); with --write-expected, several (one per seed) give each cell their mean")
    reg.add_argument("--expected", default="config/regression/demo.yaml", help="the expectations file")
    reg.add_argument("--write-expected", action="store_true",
                     help="replace the expected values by those in --results (several: their mean, and each "
                          "tolerance's pooled seed spread printed), keeping cells, tolerances and reasons (after a "
                          "deliberate change; never part of the workflow)")
    reg.add_argument("--reproduction", action="store_true",
                     help="the reproduction table of --config: its tables against its `reproduction` section's "
                          "published numbers (reproduced, published, difference, within tolerance)")
    reg.add_argument("--config", help="with --reproduction: the paper config (e.g. config/paper/study.yaml)")


def _provenance_usage(args) -> str | None:
    if args.write and not args.config:
        return "--write needs --config (whose results directory to record)"
    return None


def provenance(args) -> None:
    from posbias.provenance.jobs import ManifestJob
    from posbias.provenance.manifest import main_environment, manifest_params, write_manifest

    if not args.write:
        config = read_config(args.config) if args.config else None
        print(json.dumps(main_environment(config), indent=1))
        return
    config = read_config_object(args.config)
    out = Path(args.results) / Path(config.results_dir).relative_to("results")  # results/[<experiment>/]
    job = manifest_params(config)
    write_manifest(ManifestJob(str(out / "provenance.json"), str(out / "provenance.html"), args.results, str(out),
                               job["config_hash"], job["weights"], job["llms"], job["departures"]))


def _regress_usage(args) -> str | None:
    if args.reproduction != bool(args.config):
        return "--reproduction and --config go together (the config holds the published numbers)"
    if args.reproduction and args.write_expected:
        return "--write-expected refreshes --expected; it does not apply to --reproduction"
    if args.results and len(args.results) > 1 and not args.write_expected:
        return "several --results directories go with --write-expected (their mean); a check reads one"
    return None


def regress(args) -> int:
    from posbias import expected_values, regression, reproduction

    results = args.results or ["results"]
    if args.reproduction:
        return reproduction.run_reproduction(read_config_object(args.config), args.results and results[0], sys.stdout)
    if args.write_expected:
        return expected_values.refresh_expected(args.expected, results, sys.stdout)
    return regression.run_check(args.expected, results[0], sys.stdout)


def unlock_stale(args) -> None:
    from posbias.workflow_lock import clear_stale_lock

    outcome = clear_stale_lock(args.directory)
    if outcome != "no lock":
        print(f"posbias unlock-stale: {outcome}", file=sys.stderr)
