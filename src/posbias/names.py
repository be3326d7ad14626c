"""Reserved system names: the rows and run sources the workflow makes itself, next to the configured models.

The workflow's path functions, the evaluation and reporting steps and the schema's reserved-name lists
all use these; a test checks that the schema refuses them as model, external-run and retriever names.
"""

RETRIEVER = "retriever"  # the first-stage candidates, evaluated as a system of their own
RANDOM = "random"  # a seeded random shuffle of the candidates (the floor every ranker should beat)
GIVEN = "given"  # candidates read from a run file (`querysets.<name>.candidates`) instead of retrieved

SYSTEMS = (RETRIEVER, RANDOM)  # names models and external runs may not take
