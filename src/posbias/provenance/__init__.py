"""Provenance: what made a result, one idea a module.

- `environment`: what the calling process runs: the code (git commit and whether the work tree had uncommitted
  changes), the lock file's sha256, the Python, package, Java and CUDA versions (`environment()`), and the
  records' format and time stamp;
- `hashing`: `config_hash(data)`, sha256 of the canonical JSON of a validated config (key order and number
  spelling do not change it; any value does), and `content_hash(path)`, a file's or directory's content hash,
  cached per machine;
- `identity`: the pretrained weights a config names (`pretrained_names`), a backbone's (or any pretrained model's)
  revision (for a hub id, the commit `posbias stage` locked, and the config's pin) or content hash
  (`weights_identity(name)`), a language model's id, backend, revision, SDK and API version
  (`language_model(spec)`), and the `provenance.json` sidecar training writes into each checkpoint (with the
  device and precision it trained at, and the hash of the model's own config slice: `checkpoint_provenance(...)`);
- `manifest`: one `provenance.json` (+ `provenance.html` for the Snakemake report) per results directory
  (`write_manifest(job)`, a `jobs.ManifestJob`), what its job receives from a config (`manifest_params`), and what
  `posbias provenance` prints (`main_environment`).

Nothing here reads the value of an environment variable that may hold a secret: API keys appear only by the
name of the variable that holds them (`api_key_env`), and user names and passwords are cut out of base URLs.
"""
