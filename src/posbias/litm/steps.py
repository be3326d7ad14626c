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
from posbias.litm.paths import CLOSED_BOOK, ORACLE
from posbias.litm.jobs import PredictJob

log = logging.getLogger(__name__)



def setting_name(task: str, size: int, gold_index: int) -> str:
    return f"{'k' if task == 'qa' else 'n'}{size}_gold_at_{gold_index}"


def settings(task: str, section: dict) -> list[tuple[str, int, int | None]]:
    """(name, size, gold index) of every setting a task's config section asks for; closed-book and oracle (QA) are
    sizes 0 and 1 with no gold index, as `posbias.litm.stats` reads them."""
    key = "k" if task == "qa" else "n"
    found = [(setting_name(task, item[key], i), item[key], i) for item in section["sizes"] for i in item["positions"]]
    if task == "qa":
        found += [(CLOSED_BOOK, 0, None)] if section.get("closedbook") else []
        found += [(ORACLE, 1, None)] if section.get("oracle") else []
    return found


def variants_of(task: str, section: dict, setting: str) -> list[str]:
    """Closed-book questions have no documents to reorder or repeat the question around: default only."""
    return ["default"] if setting == CLOSED_BOOK else list(section.get("variants", ["default"]))


# --- data ------------------------------------------------------------------------------------------------------


def build_qa(section: dict, retrieval: str | None, outputs: dict[str, str]) -> None:
    """Write the QA data files (`outputs`: setting name -> path) from retrieval records (the authors'
    retrieval file or our synthetic one), or copy them out of the authors' built files (source kind `files`)."""
    from posbias.reading import qa_builder
    from posbias.staging.checksums import verify

    source, limit = section["source"], section.get("limit")
    if source["kind"] != "synthetic":
        verify(source["path"], source.get("sha256"), "litm.qa.source.sha256")
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
        name = f"nq-open-{size}_total_documents_gold_at_{gold_index}.jsonl.gz"
        path = Path(directory) / f"{size}_total_documents" / name
    if not path.exists():
        raise InputError(f"litm.qa.source.path: {path} does not exist (the authors' qa_data layout)")
    return str(path)


def _copy_authors_file(src: str, out: str, limit: int | None) -> None:
    from posbias.io import json_objects, write_jsonl
    from posbias.reading.qa_data import check_qa_record

    records = []
    for line, record in json_objects(src):
        if limit is not None and len(records) >= limit:
            break
        try:
            check_qa_record(record, require_gold=True)
        except InputError as err:
            raise InputError(f"{src}:{line}: {err}") from None
        records.append(record)
    write_jsonl(out, records)


def build_synthetic_qa(generator: dict, n_questions: int, out: str) -> None:
    """NQ-shaped retrieval records about the embedded world (`posbias.reading.synthetic_qa`)."""
    from posbias.reading.synthetic_qa import write_synthetic_qa

    write_synthetic_qa(out, generator["settings"], n_questions, tokenizer=generator["tokenizer"])


def build_kv(section: dict, outputs: dict[str, str]) -> None:
    """Write one key-value file per (size, gold position): generated with a seed, or the authors' files."""
    from posbias.reading import kv
    from posbias.io import write_jsonl
    from posbias.staging.checksums import verify

    source, limit = section["source"], section.get("limit")
    if source["kind"] == "files":
        verify(source["path"], source.get("sha256"), "litm.kv.source.sha256")
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
        write_jsonl(outputs[name], [kv.move_gold(record, gold_index) for record in records])
        log.info("wrote %s", outputs[name])


# --- predictions -----------------------------------------------------------------------------------------------


def predict(job: PredictJob) -> None:
    """Ask one language model every example of a task. The model is loaded once, and only if some answer is not
    cached."""
    from posbias.reading.predict import predict as ask, read_examples, write_predictions
    from posbias.llm.generate import open_model
    from posbias.llm.types import Decoding

    task, section, data, llm, model_name = job.task, job.section, job.data, job.reader.spec, job.reader.name
    _limit_threads(job.threads)
    model = open_model(llm, job.reader.cache["dir"], job.reader.cache["mode"], what=f"llm.models.{model_name}")
    # QA scores read the first line only, so stopping at a newline leaves them unchanged (the key-value metric
    # reads the whole answer: no such option there)
    decode = Decoding(**job.reader.decoding, stop=("\n",) if section.get("stop_at_newline") else ())
    for variant in dict.fromkeys(v for name, _, _ in settings(task, section) for v in variants_of(task, section, name)):
        examples = {name: read_examples(data[ORACLE if name == CLOSED_BOOK else name], task, variant=variant,
                                        closedbook=name == CLOSED_BOOK, seed=section.get("seed", 0))
                    for name, _, _ in settings(task, section) if variant in variants_of(task, section, name)}
        excluded = _too_long(model, task, section, examples, decode)
        for name, items in examples.items():
            records = ask(items, model, decode, model_name, llm["backend"], llm.get("revision"),
                          excluded=excluded.get(name, ()))
            write_predictions(job.outputs[f"{variant}/{name}"], records)
            log.info("%s %s %s: %d answers", model_name, variant, name, len(records))


def _too_long(model, task: str, section: dict, examples: dict, decoding) -> dict[str, set[str]]:
    """Setting name -> ids of the questions a local model's context cannot hold with its answer, decided once per
    question over every position of a size (so each curve stays paired; the authors' Llama-2 script decided per
    file). Only local models are checked: an API's tokenizer is not at hand, and the API refuses what is too long."""
    from posbias.litm.exclusions import excluded_examples

    backend = model.backend
    count = getattr(backend, "count_tokens", None)
    if count is None:
        return {}
    limits = [getattr(backend.config, "max_position_embeddings", None), model.spec.context]
    limits = [limit for limit in limits if limit]
    if not limits:
        return {}
    budget = min(limits) - decoding.max_new_tokens
    excluded: dict[str, set[str]] = {}
    for _, size, _ in settings(task, section):
        names = [name for name, n, gold in settings(task, section) if n == size and gold is not None
                 and name in examples]
        if not names or names[0] in excluded:
            continue
        prompts = {name: [(ex.example_id, backend.render(ex.request())) for ex in examples[name]] for name in names}
        too_long = set(excluded_examples(prompts, count, budget))
        if too_long:
            log.warning("%d questions of size %d do not fit the model's %d tokens with the answer; left out at every "
                        "position: %s", len(too_long), size, min(limits), ", ".join(sorted(too_long)[:10]))
        excluded.update({name: too_long for name in names})
    return excluded


def _limit_threads(threads: int | None) -> None:
    if threads:
        import torch

        torch.set_num_threads(threads)


# --- scoring and report ----------------------------------------------------------------------------------------


def score(task: str, predictions: dict[str, str], out: str) -> None:
    """Score every prediction file (`predictions`: `{model}/{variant}/{setting}` -> path) into one Parquet file of
    per-example rows with the columns `posbias.litm.stats` reads."""
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


def report(evaluations: list[str], labels: dict[str, str], tables: dict[str, dict], figures: dict[str, list[str]],
           correction: str = "holm", sensitivity: dict[str, str] | None = None) -> None:
    """Tables (`tables`: `{task}_{size}` -> the four output paths) and figures (`figures`: `{task}_{size}` -> PNG
    and PDF paths) of accuracy by gold position, one per task and size, and with `sensitivity` (the four output
    paths) every curve's position-curve metric suite in one table. Each position is tested against the curve's
    first one, with `correction` (`litm.correction`) over the tests of each curve."""
    from posbias.litm.stats import gap_table, position_table, sensitivity_table
    from posbias.reporting.figures import position_curves
    from posbias.reporting.position_tables import position_table_outputs, sensitivity_table_outputs

    scored = pd.concat([pd.read_parquet(p) for p in evaluations], ignore_index=True)
    positions = position_table(scored, correction=correction)
    gaps = gap_table(positions)
    for key, outputs in tables.items():
        task, size = key.split("_")
        position_table_outputs(positions, gaps, task, int(size), labels, outputs, correction)
    for key, outputs in figures.items():
        task, size = key.split("_")
        position_curves(positions, task, int(size), labels, outputs)
    if sensitivity:
        sensitivity_table_outputs(sensitivity_table(scored, correction), labels, sensitivity, correction)
