"""posbias's scorers and candidates inside other IR toolkits (`pyterrier`: PyTerrier transformers)."""
