"""What `posbias stage` fetched, as the jobs that run offline read it (docs/cluster.md).

`posbias stage --config FILE [TARGET...]` (posbias.staging.cli, posbias.staging.steps) finds every input a
config (or the jobs of the targets) reads from outside the workflow (posbias.config.inputs) and for each:

- an ir_datasets dataset's documents, queries or judgments: the files ir_datasets keeps under IR_DATASETS_HOME,
  fetched with ir_datasets' own downloads, which check their MD5 (`irds`);
- a Hugging Face hub model or dataset: a snapshot in the hub cache (HF_HOME) at the revision the config pins, or at
  the commit stage resolves and records in the lock file (`hub`);
- a file placed by hand (doc2query expansions, the Re-DocRED files, the Lost-in-the-Middle NQ-open file, TREC Disks
  4 and 5 for ir_datasets): checked against the sha256 the config keeps beside its path (`checksums`).

Jobs then run offline (`offline`): with POSBIAS_OFFLINE=1 they read only what was staged, and anything missing is
one line naming it and the stage command, exit status 2 (`NotStagedError`), instead of a hang or a library's
traceback. These modules sit below the loaders that call them (posbias.backbones, posbias.data.sources) and
import nothing of posbias above them.
"""
