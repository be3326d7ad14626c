"""`experiment`: a name for this config's tables and figures (results/<experiment>/)."""

from pathlib import Path

from posbias.config.section import ConfigError, Section

# What the workflow writes directly under results/ (shared by every experiment in the tree).
RESULTS_DIRECTORIES = ("data", "tokens", "vectors", "index", "candidates", "models", "models-finetuned", "runs",
                       "runs-cv", "runs-finetuned", "eval", "eval-finetuned", "eval-cutoff", "eval-first-stage",
                       "stats", "benchmarks", "figures", "positions")


def check(cfg: dict, warnings: list[str]) -> None:
    if cfg.get("experiment") in RESULTS_DIRECTORIES:
        raise ConfigError(f"experiment: {cfg['experiment']!r} is a directory the workflow writes under results/; "
                          f"choose another name")


SECTION = Section("experiment", Path(__file__).with_name("experiment.schema.yaml"), check=check)
