"""The files of a checkpoint directory (`posbias.rankers.checkpoint` writes and reads them). Torch-free, so that
provenance can name a checkpoint's sidecar without importing a ranker."""

BACKBONE, AUXILIARY, STATE, DESCRIPTION = "backbone", "auxiliary", "ranker.pt", "ranker.json"
LEGACY_HEAD = "head.pt"  # the state file of checkpoints written before ranker.pt
SIDECAR = "provenance.json"  # how the checkpoint was made; never read when the checkpoint is loaded
