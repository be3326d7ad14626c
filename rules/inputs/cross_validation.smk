# The names, paths and input functions of rules/cross_validation.smk (Snakemake's lint keeps functions out of a file
# with rules).

def folds_of(queryset):
    return data_paths.folds(collection_of(queryset), queryset)


from posbias.training.config import run_tag


def fold_params():
    """What a fold's job receives besides files, one param each (`CFG.cross_validation.fold_params`, which
    `posbias cross-validate fold` also calls)."""
    return one_param_each(lambda wc: CFG.cross_validation.fold_params(wc.model, wc.seed, wc.fold),
                          ("model", "training", "seed", "fold", "name", "tag"))


def checkpoint_params():
    """What a checkpoint's job for all its folds receives besides files, one param each
    (`CFG.cross_validation.checkpoint_params`, which `posbias cross-validate checkpoint` also calls)."""
    return one_param_each(lambda wc: CFG.cross_validation.checkpoint_params(wc.model, wc.seed),
                          ("model", "training", "seed", "name", "tag"))


def one_param_each(params_of, keys):
    """Params given as one dict per job, as one Snakemake param per key."""
    return {key: (lambda wc, key=key: params_of(wc)[key]) for key in keys}
