"""posbias: positional bias in long-document ranking, as a Snakemake workflow and a package."""

__version__ = "0.2.0"
