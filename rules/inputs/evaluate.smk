# The names, paths and input functions of rules/evaluate.smk (Snakemake's lint keeps functions out of a file
# with rules).

def pool_members_evaluated(wildcards):
    return [evaluated(member, wildcards.system, wildcards.seed) for member in QUERYSETS[wildcards.queryset].pool]
