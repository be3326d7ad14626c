"""Reranking by hand (rules/rerank.smk): candidates reranked with a trained checkpoint, a zero-shot model of a
config, or a listwise (RankGPT) model through its language model.

    posbias rerank --checkpoint ckpt/ --tokens tokens/ --queries ... --candidates ... --run out.run
    posbias rerank --model longp_rankgpt --config config.yaml --docs docs.jsonl --queries ... --candidates ... \
        --run out.run          (RankGPT: document texts, answers through the config's llm.cache)
"""

from __future__ import annotations

from posbias.command_flags import POSITIVE, add_command, named_block, read_config, reads, word
from posbias.errors import InputError


def register(commands) -> None:
    rr = add_command(commands, "rerank", rerank, usage_check=_rerank_usage,
                     help="rerank candidates with a checkpoint, or with a zero-shot model of a config")
    reads(rr, "--tokens", "directory", help="token store of the collection (posbias tokenize); for every ranker "
                                             "but a listwise one")
    reads(rr, "--docs", help="the collection's documents (JSONL), for a listwise --model (RankGPT)")
    reads(rr, "--checkpoint", "directory", help="a trained checkpoint (posbias train)")
    rr.add_argument("--model", help="instead of --checkpoint: a zero-shot model of --config (zero_shot: true), "
                                    "scored with its pretrained weights, or a RankGPT model (its language model "
                                    "answers through the config's llm.cache)")
    rr.add_argument("--config", default="config.yaml", help="the config of --model")
    rr.add_argument("--cache-mode", choices=["read_write", "read_only", "off"],
                    help="RankGPT: the response cache's mode instead of the config's llm.cache.mode (read_only "
                         "replays recorded answers and never calls a model)")
    for name in ("queries", "candidates"):
        reads(rr, f"--{name}", required=True)
    rr.add_argument("--run", required=True)
    rr.add_argument("--tag", type=word, default="posbias")
    rr.add_argument("--batch-size", type=POSITIVE, default=32)
    rr.add_argument("--device", default="auto", help="auto, cpu, cuda or cuda:N")
    rr.add_argument("--precision", default="auto", choices=["auto", "fp32", "bf16", "fp16"],
                    help="the backbone's autocast dtype (auto: bf16 or fp16 on CUDA, fp32 on a CPU; bf16 also runs "
                         "on a CPU); scores always come from an fp32 head")
    rr.add_argument("--threads", type=POSITIVE, default=1)


def _rerank_usage(args) -> str | None:
    if (args.checkpoint is None) == (args.model is None):
        return "give either --checkpoint (a trained model) or --model (a zero-shot model of --config)"
    return None


def rerank(args) -> None:
    from posbias.rankers import catalog

    if args.model is None:
        from posbias.rerank.steps import rerank_candidates

        _needs(args, "--tokens", "a checkpoint reads the collection's token store")
        rerank_candidates(args.checkpoint, _reranking(args), args.threads)
        return
    config = read_config(args.config)
    model = named_block(config, "models", args.model, args.config, "--model")
    if model["ranker"] in catalog.LISTWISE:
        from posbias.rerank.jobs import ListwiseJob
        from posbias.rerank.steps import rerank_listwise

        _needs(args, "--docs", f"models.{args.model} ranks document texts through a language model")
        cache = {**config.get("llm", {}).get("cache", {"dir": "cache/llm", "mode": "read_write"}),
                 **({"mode": args.cache_mode} if args.cache_mode else {})}
        llm = {k: v for k, v in config["llm"]["models"][model["args"]["llm"]].items() if k != "label"}
        rerank_listwise(ListwiseJob(model["args"], llm, model["args"]["llm"], cache, args.docs, args.queries,
                                    args.candidates, args.run, args.tag))
        return
    if not model.get("zero_shot"):
        raise InputError(f"--model {args.model}: models.{args.model} in {args.config} is trained, not "
                         f"zero-shot; rerank with one of its checkpoints (--checkpoint)")
    from posbias.rerank.steps import rerank_pretrained

    _needs(args, "--tokens", "it reads the collection's token store")
    rerank_pretrained(model, _reranking(args), args.threads)


def _needs(args, flag: str, why: str) -> None:
    if getattr(args, flag.lstrip("-")) is None:
        raise InputError(f"{flag}: required here ({why})")


def _reranking(args):
    """The one query set the flags name, scored as they say."""
    from posbias.scoring.reranking import Reranking

    return Reranking([args.tokens], [args.queries], [args.candidates], [args.run], args.tag,
                     {"batch_size": args.batch_size, "device": args.device, "precision": args.precision})
