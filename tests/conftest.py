"""Shared fixtures: a tiny random BERT with the offline MiniLM tokenizer, small collections, a test IR_DATASETS_HOME,
a small disk that really fills."""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

# ir_datasets fixes its data directory when its dataset modules are imported, so the
# tests' directory is set before anything imports it; no test reads or writes ~/.ir_datasets.
IR_DATASETS_HOME = os.environ["IR_DATASETS_HOME"] = tempfile.mkdtemp(prefix="posbias-test-irds-")
atexit.register(shutil.rmtree, IR_DATASETS_HOME, ignore_errors=True)

OFFLINE = "offline:all-MiniLM-L6-v2"


def _tiny_backbone(path, architecture: str) -> str:
    """A 2-layer, 32-wide random encoder of one architecture (BERT, ELECTRA or RoBERTa-shaped) with
    the offline MiniLM (BERT WordPiece) tokenizer, saved as a Hugging Face directory."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel, ElectraConfig, ElectraModel, RobertaConfig, RobertaModel

    from posbias.backbones import resolve

    tokenizer = AutoTokenizer.from_pretrained(resolve(OFFLINE))
    shape = dict(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                 intermediate_size=64)
    torch.manual_seed(0)
    if architecture == "bert":
        model = BertModel(BertConfig(**shape, max_position_embeddings=128))
    elif architecture == "electra":  # a smaller embedding than hidden size, projected up, as ELECTRA does
        model = ElectraModel(ElectraConfig(**shape, embedding_size=16, max_position_embeddings=128))
    else:  # positions count from pad_token_id + 1, one type embedding
        model = RobertaModel(RobertaConfig(**shape, pad_token_id=tokenizer.pad_token_id, type_vocab_size=1,
                                           max_position_embeddings=128 + tokenizer.pad_token_id + 1))
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)


@pytest.fixture(scope="session")
def tiny_backbone(tmp_path_factory) -> str:
    """A 2-layer, 32-wide BERT saved as a Hugging Face directory (random weights, real tokenizer)."""
    return _tiny_backbone(tmp_path_factory.mktemp("tiny-bert"), "bert")


@pytest.fixture(scope="session", params=["bert", "electra", "roberta"])
def tiny_backbones(request, tmp_path_factory) -> str:
    """`tiny_backbone` in each architecture the study's rankers sit on (parametrises the test)."""
    return _tiny_backbone(tmp_path_factory.mktemp(f"tiny-{request.param}"), request.param)


@pytest.fixture(scope="session")
def tokenizer():
    from posbias.backbones import load_tokenizer

    return load_tokenizer(OFFLINE)


@pytest.fixture
def token_store(tmp_path):
    """A factory: `token_store({doc_id: text}, cap=None)` writes the documents as JSONL and returns
    the opened token store built from them with the offline MiniLM tokenizer."""
    from posbias.data.token_store import TokenStore, build_token_store
    from posbias.io import write_documents

    made = []

    def make(docs: dict, cap: int | None = None, name: str = "store"):
        path = tmp_path / f"{name}.jsonl"
        write_documents(path, ({"id": doc_id, "text": text} for doc_id, text in docs.items()))
        build_token_store(path, tmp_path / name, OFFLINE, cap, progress=False)
        made.append(TokenStore(tmp_path / name))
        return made[-1]

    yield make
    for store in made:
        store.close()


class SmallDisk:
    """A mounted tmpfs of a few megabytes (`root`): a file system that really fills, as a scratch disk does."""

    def __init__(self, root: Path):
        self.root = root

    def resize(self, size: str) -> None:
        """Give it `size` (as mount's tmpfs option: `64m`), keeping its files: the disk after an admin enlarged it."""
        subprocess.run(["mount", "-o", f"remount,size={size}", str(self.root)], check=True, capture_output=True)


@pytest.fixture
def small_disk(tmp_path):
    """`small_disk(size)`: a `SmallDisk` of `size` (`1m`, `16k`) mounted in tmp_path, unmounted after the test
    whatever happens. Mounting needs root (CAP_SYS_ADMIN): elsewhere the test is skipped, saying why."""
    mounted = []

    def mount(size: str) -> SmallDisk:
        if os.geteuid() != 0:
            pytest.skip("a real full disk needs a small tmpfs, and mounting one needs root")
        root = tmp_path / f"disk{len(mounted)}"
        root.mkdir()
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(root)],
                              capture_output=True, text=True)
        if done.returncode:
            pytest.skip(f"cannot mount a tmpfs here (a container without CAP_SYS_ADMIN?): {done.stderr.strip()}")
        mounted.append(root)
        return SmallDisk(root)

    yield mount
    for root in mounted:
        if subprocess.run(["umount", str(root)], capture_output=True).returncode:
            subprocess.run(["umount", "--lazy", str(root)], capture_output=True)  # busy: detach it now, free it later


# --- the command line: run `posbias` in this process and check how it fails (tests/cli, tests/<stage>/*_cli.py) ---
@pytest.fixture
def input_error(capsys):
    """`input_error(argv)`: run the command, which must fail with exit status 2 and one error line on stderr,
    `posbias <command>: error: <message>`, its last (progress bars may come before it), no traceback, and
    nothing on stdout; returns the message."""
    def run(argv: list[str]) -> str:
        from posbias.cli import main

        with pytest.raises(SystemExit) as exit_info:
            main([str(arg) for arg in argv])
        captured = capsys.readouterr()
        assert exit_info.value.code == 2, captured.err
        assert captured.out == "" and "Traceback" not in captured.err
        lines = captured.err.strip().splitlines()
        prefix = f"posbias {argv[0]}: error: "
        assert lines[-1].startswith(prefix) and sum(prefix in line for line in lines) == 1, captured.err
        return lines[-1][len(prefix):]
    return run


@pytest.fixture
def usage_error(capsys):
    """`usage_error(argv)`: run the command, which argparse must refuse (usage, exit status 2); returns the
    message of its last line `posbias <command>: error: <message>`."""
    def run(argv: list[str]) -> str:
        from posbias.cli import main

        with pytest.raises(SystemExit) as exit_info:
            main([str(arg) for arg in argv])
        captured = capsys.readouterr()
        assert exit_info.value.code == 2 and captured.out == ""
        last = captured.err.strip().splitlines()[-1]
        assert captured.err.startswith("usage: posbias") and "Traceback" not in captured.err
        prefix = f"posbias {argv[0]}: error: "
        assert last.startswith(prefix), last
        return last[len(prefix):]
    return run


def pytest_collection_modifyitems(items):
    """The files marked slow first, and of those the ones reading the tiny workflow's run (the suite's longest
    chain: the run, then its tests) first of all; every other test keeps its place. `make test` hands whole files
    to its two workers in this order (--dist loadfile --no-loadscope-reorder), so the longest start at once. The
    run's jobs run two at a time, so it keeps both cores busy while the other worker waits for it; starting the
    walk-through beside it instead gained nothing measurable (23 min 38 s on the AMD EPYC, 40 min 41 s of CPU, at an
    hour when the demo's jobs ran 30% slower than that morning: three or four busy processes on two cores)."""
    reading_the_run = {item.path for item in items if "finished_run" in item.fixturenames}
    items.sort(key=lambda item: (item.get_closest_marker("slow") is None, item.path not in reading_the_run))


@pytest.fixture
def inside_context(monkeypatch):
    """`inside_context(module, context, call)`: `module.context` (a context manager taking (ranker, enabled)) replaced
    by one that records `enabled` on entry and "left" on exit, and `module.call` wrapped to record, at each call,
    the last of those. Returns the two lists (entered, calls): a setting reached the context, and every call ran
    inside it."""
    import contextlib

    def record(module, context: str, call: str):
        entered, calls = [], []

        @contextlib.contextmanager
        def recording(ranker, enabled):
            entered.append(enabled)
            yield
            entered.append("left")

        original = getattr(module, call)

        def recorded(*args, **kwargs):
            calls.append(entered[-1])
            return original(*args, **kwargs)

        monkeypatch.setattr(module, context, recording)
        monkeypatch.setattr(module, call, recorded)
        return entered, calls

    return record


# --- Lost in the Middle's records (posbias.reading, posbias.litm) ---------------------------------------------

QA_RETRIEVAL_FIXTURE = Path(__file__).parent / "reading" / "data" / "retrieval.jsonl"  # four NQ-like questions


def write_gz(path, records) -> Path:
    import gzip
    import json

    with gzip.open(path, "wt", encoding="utf-8") as out:
        for record in records:
            out.write((record if isinstance(record, str) else json.dumps(record)) + "\n")
    return Path(path)


def read_gz(path) -> list[dict]:
    import gzip
    import json

    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


@pytest.fixture(name="write_gz")
def write_gz_fixture():
    """`write_gz(path, records)`: records (or raw lines) into a gzipped JSONL file, as the authors ship them."""
    return write_gz


@pytest.fixture(name="read_gz")
def read_gz_fixture():
    return read_gz


@pytest.fixture
def retrieval_records() -> list[dict]:
    """A hand-written retrieval-results fixture: four NQ-like questions with their retrieved documents."""
    import json

    return [json.loads(line) for line in QA_RETRIEVAL_FIXTURE.read_text(encoding="utf-8").splitlines()]


@pytest.fixture
def retrieval_file(tmp_path, retrieval_records) -> Path:
    return write_gz(tmp_path / "retrieved.jsonl.gz", retrieval_records)
