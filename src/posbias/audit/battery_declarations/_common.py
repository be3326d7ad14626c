"""What several batteries' declarations share."""

# The sizing settings of a battery (`posbias.audit.sizing`): `detect`, the drop to find at 80% power in the metric's
# units (null: run the configured units as they are), and `max_units`, the most units sizing may ask for (null: all
# the battery's data hold)
SIZED = {"detect": None, "max_units": None}
DEPTHS = [0.0, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 1.0]  # denser near both ends, where the curves bend
# What a pair scorer's and a listwise ranker's real-text `source` names (`pool_size` is optional)
PASSAGE_SOURCE = ("queries", "qrels", "passages")
