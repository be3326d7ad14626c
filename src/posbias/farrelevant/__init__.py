"""The FarRelevant stage: the diagnostic set built from a passage collection or a real source (`config`, `paths`
by way of `posbias.data.paths`, `steps`, `cli`; the documents themselves: `posbias.data.farrelevant`)."""
