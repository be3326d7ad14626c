# The names, paths and input functions of rules/cross_validation.smk (Snakemake's lint keeps functions out of a file
# with rules).

def folds_of(queryset):
    return f"results/data/{collection_of(queryset)}/folds/{queryset}.tsv"
