# The names, paths and input functions of rules/cross_validation.smk (Snakemake's lint keeps functions out of a file
# with rules).

def folds_of(queryset):
    return f"results/data/{collection_of(queryset)}/folds/{queryset}.tsv"


from posbias.config.sections.cross_validation import run_tag


def fold_params():
    """What a fold's job receives besides files, one param each (`CFG.cross_validation.fold_params`, which
    `posbias cross-validate fold` also calls)."""
    keys = ("model", "training", "seed", "fold", "name", "tag")
    return {key: (lambda wc, key=key: CFG.cross_validation.fold_params(wc.model, wc.seed, wc.fold)[key])
            for key in keys}
