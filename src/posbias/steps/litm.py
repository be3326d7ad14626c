"""Pipeline steps of the Lost-in-the-Middle stage (Liu et al., TACL 2024): build the examples, ask a language model,
score the answers, and report accuracy by gold position.

Every file between the steps is in the authors' layout (their QA and key-value records, their prediction fields),
so their released data can be read, and their evaluator could score our predictions. Settings are named
`k{k}_gold_at_{i}` (QA: k documents, the answer-bearing one at 0-based index i), `n{n}_gold_at_{i}` (key-value
pairs), `closedbook` and `oracle`.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pandas as pd

from posbias.errors import InputError

log = logging.getLogger(__name__)

CLOSED_BOOK, ORACLE = "closedbook", "oracle"


def setting_name(task: str, size: int, gold_index: int) -> str:
    return f"{'k' if task == 'qa' else 'n'}{size}_gold_at_{gold_index}"


def settings(task: str, section: dict) -> list[tuple[str, int, int | None]]:
    """(name, size, gold index) of every setting a task's config section asks for; closed-book and oracle (QA) are
    sizes 0 and 1 with no gold index, as `posbias.litm.positions` reads them."""
    key = "k" if task == "qa" else "n"
    found = [(setting_name(task, item[key], i), item[key], i) for item in section["sizes"] for i in item["positions"]]
    if task == "qa":
        found += [(CLOSED_BOOK, 0, None)] if section.get("closedbook") else []
        found += [(ORACLE, 1, None)] if section.get("oracle") else []
    return found


def variants_of(task: str, section: dict, setting: str) -> list[str]:
    """Closed-book questions have no documents to reorder or repeat the question around: default only."""
    return ["default"] if setting == CLOSED_BOOK else list(section.get("variants", ["default"]))


def data_file(task: str, setting: str, root: str = "results/litm/data") -> str:
    """Closed-book prompts read the oracle file (its question and answers), as the authors did."""
    return f"{root}/{task}/{ORACLE if setting == CLOSED_BOOK else setting}.jsonl.gz"


# --- data ------------------------------------------------------------------------------------------------------


def build_qa(section: dict, retrieval: str | None, outputs: dict[str, str]) -> None:
    """Write the QA data files (`outputs`: setting name -> path) from retrieval records (the authors'
    retrieval file or our synthetic one), or copy them out of the authors' built files (source kind `files`)."""
    from posbias.litm import qa_builder

    source, limit = section["source"], section.get("limit")
    for name, size, gold_index in settings("qa", section):
        if name == CLOSED_BOOK:
            continue
        out = outputs[name]
        if source["kind"] == "files":
            _copy_authors_file(_authors_qa_file(source["path"], name, size, gold_index), out, limit)
        elif name == ORACLE:
            qa_builder.write_oracle_file(retrieval, out, limit=limit)
        else:
            qa_builder.write_position_file(retrieval, out, size, gold_index, limit=limit)
        log.info("wrote %s", out)


def _authors_qa_file(directory: str, name: str, size: int, gold_index: int | None) -> str:
    if name == ORACLE:
        path = Path(directory) / "nq-open-oracle.jsonl.gz"
    else:
        path = Path(directory) / f"{size}_total_documents" / f"nq-open-{size}_total_documents_gold_at_{gold_index}.jsonl.gz"
    if not path.exists():
        raise InputError(f"litm.qa.source.path: {path} does not exist (the authors' qa_data layout)")
    return str(path)


def _copy_authors_file(src: str, out: str, limit: int | None) -> None:
    from posbias.litm.files import read_jsonl, write_jsonl
    from posbias.litm.qa_data import check_qa_record

    records = []
    for line, record in read_jsonl(src):
        if limit is not None and len(records) >= limit:
            break
        try:
            check_qa_record(record, require_gold=True)
        except InputError as err:
            raise InputError(f"{src}:{line}: {err}") from None
        records.append(record)
    write_jsonl(out, records)


def build_synthetic_qa(generator: dict, n_questions: int, out: str) -> None:
    """NQ-shaped retrieval records about the embedded world (`posbias.litm.synthetic_qa`)."""
    from posbias.litm.synthetic_qa import write_synthetic_qa

    write_synthetic_qa(out, generator["settings"], n_questions, tokenizer=generator["tokenizer"])


def build_kv(section: dict, outputs: dict[str, str]) -> None:
    """Write one key-value file per (size, gold position): generated with a seed, or the authors' files."""
    from posbias.litm import kv

    source, limit = section["source"], section.get("limit")
    for name, size, gold_index in settings("kv", section):
        if source["kind"] == "files":
            original = Path(source["path"]) / f"kv-retrieval-{size}_keys.jsonl.gz"
            if not original.exists():
                raise InputError(f"litm.kv.source.path: {original} does not exist (the authors' kv_retrieval_data "
                                 f"layout)")
            records = kv.read_kv_records(original, limit)
        else:
            # the same examples at every position: only the target pair moves
            records = kv.generate_kv_examples(limit or source["n_examples"], size, source["seed"],
                                              source.get("key_format", "uuid"))
        from posbias.litm.files import write_jsonl

        write_jsonl(outputs[name], [kv.move_gold(record, gold_index) for record in records])
        log.info("wrote %s", outputs[name])


# --- predictions -----------------------------------------------------------------------------------------------


def predict(task: str, section: dict, llm: dict, cache: dict, decoding: dict, data: dict[str, str],
            outputs: dict[str, str], model_name: str, seed: int = 0) -> None:
    """Ask one language model every example of a task: `data` maps setting names to data files, `outputs` maps
    `{variant}/{setting}` to prediction files. The model is loaded once, and only if some answer is not cached."""
    from posbias.litm.predict import predict as ask, read_examples, write_predictions
    from posbias.llm.generate import open_model
    from posbias.llm.types import Decoding

    model = open_model(llm, cache["dir"], cache["mode"], what=f"llm.models.{model_name}")
    # QA scores read the first line only, so stopping at a newline leaves them unchanged (the key-value metric
    # reads the whole answer: no such option there)
    decode = Decoding(**decoding, stop=("\n",) if section.get("stop_at_newline") else ())
    for name, _, _ in settings(task, section):
        for variant in variants_of(task, section, name):
            examples = read_examples(data[ORACLE if name == CLOSED_BOOK else name], task, variant=variant,
                                     closedbook=name == CLOSED_BOOK,
                                     seed=section.get("seed", 0))
            records = ask(examples, model, decode, model_name, llm["backend"], llm.get("revision"))
            write_predictions(outputs[f"{variant}/{name}"], records)
            log.info("%s %s %s: %d answers", model_name, variant, name, len(records))


# --- scoring and report ----------------------------------------------------------------------------------------


def score(task: str, predictions: dict[str, str], out: str) -> None:
    """Score every prediction file (`predictions`: `{model}/{variant}/{setting}` -> path) into one Parquet file of
    per-example rows with the columns `posbias.litm.positions` reads."""
    from posbias.io import atomic_write
    from posbias.litm.score import score_file

    frames = []
    for key, path in predictions.items():
        model, variant, setting = key.split("/")
        frame = score_file(path, task=task)
        size = 0 if setting == CLOSED_BOOK else 1 if setting == ORACLE else int(setting.split("_")[0][1:])
        frames.append(frame.assign(model=model, task=task, variant=variant, size=size, setting=setting))
    scored = pd.concat(frames, ignore_index=True)
    with atomic_write(out, "wb") as handle:
        scored.to_parquet(handle, index=False)
    log.info("scored %d answers of %d files", len(scored), len(frames))


def report(evaluations: list[str], labels: dict[str, str], tables: dict[str, dict], figures: dict[str, list[str]]
           ) -> None:
    """Tables (`tables`: `{task}_{size}` -> the four output paths) and figures (`figures`: `{task}_{size}` -> PNG
    and PDF paths) of accuracy by gold position, one per task and size."""
    from posbias.litm.positions import gap_table, position_table
    from posbias.reporting.figures import position_curves
    from posbias.reporting.position_tables import position_table_outputs

    scored = pd.concat([pd.read_parquet(p) for p in evaluations], ignore_index=True)
    positions = position_table(scored)
    gaps = gap_table(positions)
    for key, outputs in tables.items():
        task, size = key.split("_")
        position_table_outputs(positions, gaps, task, int(size), labels, outputs)
    for key, outputs in figures.items():
        task, size = key.split("_")
        position_curves(positions, task, int(size), labels, outputs)
