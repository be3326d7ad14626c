"""The names of the two position probes whose pairs `posbias.docred.position` builds (each pair's `probe`); the
bias probes' declarations list them under the same names. It imports nothing: the workflow reads those
declarations when it builds its graph."""

FIRST_LAST = "position_first_last"
SWEEP = "position_sweep"
