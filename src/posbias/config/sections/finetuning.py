"""`finetuning`: fine-tuning trained checkpoints on a query set before reranking others (checked with training)."""

from pathlib import Path

from posbias.config.section import Section

SECTION = Section("finetuning", Path(__file__).with_name("finetuning.schema.yaml"))
