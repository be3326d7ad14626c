"""The `posbias` commands of the workflow's core stages, one module per stage, each with `register(commands)`.

An analysis stage's commands live in its own folder (`posbias/<stage>/cli.py`) and are found through the config
registry; these are the stages every config runs. `posbias.cli` adds both kinds and turns bad input into one
line and exit status 2. A command's arguments beyond its files come from the same config accessors the rules
use, so a command by hand writes what the workflow's job writes.
"""

# In the order `posbias --help` lists them.
CORE_STAGES = ("stage", "data", "retrieval", "training", "evaluation", "study", "records", "plan")
