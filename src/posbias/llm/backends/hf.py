"""Local Hugging Face models: `hf_causal` (decoder-only, `AutoModelForCausalLM`) and `hf_seq2seq`
(encoder-decoder, `AutoModelForSeq2SeqLM`).

`spec.model` is a local directory or an `offline:` name (`posbias.backbones`). Options: `dtype` (float32, the
default, bfloat16 or float16; part of the cache key, since it changes answers), `device` (auto: cuda when
available, else cpu), `trust_remote_code` (false unless the config opts in) and `batch_size` (1, the default:
one prompt at a time).

Decoding is greedy. With `batch_size` > 1 a causal model decodes that many prompts together, padded on the left
and masked: each new token then reads the weights once for all of them, which token-by-token decoding on a CPU
spends most of its time on. Padding changes the order of floating-point sums, so a near-tie between two tokens
could in principle break the other way than alone; the batch size is recorded with each answer (not in the cache
key, which names what decides an answer by design). The answer is the generated token ids decoded, never the
decoded output cut by the decoded prompt's length (decoding does not round-trip). The tokenizer and config are
read only when needed and the weights only on the first call, so replaying a cache never loads a model.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import inspect
from pathlib import Path
from typing import Mapping, Sequence

from posbias.backbones import from_pretrained, load_tokenizer, resolve
from posbias.errors import InputError
from posbias.llm import wrappers
from posbias.llm.backends.base import Answer, Backend, cut_at_stop, package_version, require_greedy
from posbias.llm.spec import ModelSpec
from posbias.llm.types import Decoding, Request

DTYPES = ("float32", "bfloat16", "float16")
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf", ".h5", ".msgpack")


def fingerprint(directory: str | Path) -> str:
    """A cheap stand-in for a revision: sha256 of config.json plus the names and sizes of the weight files
    (hashing gigabytes of weights per job would cost more than it protects)."""
    directory = Path(directory)
    digest = hashlib.sha256((directory / "config.json").read_bytes())
    for path in sorted(directory.iterdir()):
        if path.is_file() and path.name.endswith(WEIGHT_SUFFIXES):
            digest.update(f"\n{path.name}\t{path.stat().st_size}".encode("utf-8"))
    return "sha256:" + digest.hexdigest()


class _HFBackend(Backend):
    WRAPPERS = tuple(name for name in wrappers.WRAPPERS if name != "messages")
    OPTIONS = ("dtype", "device", "trust_remote_code", "batch_size")
    LOADER = ""  # the name of the transformers Auto class

    def __init__(self, spec: ModelSpec):
        super().__init__(spec)
        self.dtype = spec.options.get("dtype", "float32")
        if self.dtype not in DTYPES:
            raise InputError(f"model {spec.model!r}: options.dtype {self.dtype!r} is not one of {', '.join(DTYPES)}")
        self.device_option = spec.options.get("device", "auto")
        self.trust_remote_code = spec.options.get("trust_remote_code", False) is True
        batch_size = spec.options.get("batch_size", 1)
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise InputError(f"model {spec.model!r}: options.batch_size {batch_size!r} is not a whole number >= 1")
        self.batch_size = batch_size
        self._model = None

    @functools.cached_property
    def tokenizer(self):
        return load_tokenizer(self.spec.model, self.trust_remote_code)

    @functools.cached_property
    def config(self):
        from transformers import AutoConfig

        return from_pretrained(AutoConfig, self.spec.model, "model config", trust_remote_code=self.trust_remote_code)

    @functools.cached_property
    def _identity(self) -> dict:
        revision = self.spec.revision
        if revision is None:
            path = Path(resolve(self.spec.model))
            if not (path / "config.json").is_file():
                raise InputError(f"model {self.spec.model!r}: not a local model directory, so its weights cannot "
                                 "be fingerprinted for the response cache; set its revision")
            revision = fingerprint(path)
        return {**super().identity(), "revision": revision, "dtype": self.dtype}

    def identity(self) -> dict:
        return dict(self._identity)

    def render(self, request: Request) -> str:
        tokenizer = self.tokenizer if self.spec.wrapper == "chat_template" else None
        return wrappers.render(self.spec.wrapper, request, tokenizer)

    def sdk(self) -> dict:
        return package_version("transformers")

    @property
    def device(self) -> str:
        if self.device_option != "auto":
            return self.device_option
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"

    def prepare(self) -> None:
        _ = self.model  # loads the weights

    @property
    def model(self):
        if self._model is None:
            import torch
            import transformers

            loader = getattr(transformers, self.LOADER)
            model = from_pretrained(loader, self.spec.model, "language model", dtype=getattr(torch, self.dtype),
                                    trust_remote_code=self.trust_remote_code)
            self._model = model.to(self.device).eval()
        return self._model

    def _generation_config(self, decoding: Decoding):
        """The model's own generation settings (its EOS ids) made greedy, with no sampling leftovers."""
        config = copy.deepcopy(self.model.generation_config)
        config.do_sample = False
        config.temperature = config.top_p = config.top_k = None
        config.num_beams = 1
        config.max_new_tokens = decoding.max_new_tokens
        if not _ids(config.eos_token_id) and self.tokenizer.eos_token_id is not None:
            config.eos_token_id = self.tokenizer.eos_token_id
        # Batch size 1 never pads, but generate wants a pad id: the tokenizer's, else EOS.
        pad = self.tokenizer.pad_token_id
        config.pad_token_id = pad if pad is not None else (_ids(config.eos_token_id) or [None])[0]
        return config

    def _check_context(self, prompt_tokens: int, needed: int, limit_of_model: int | None) -> None:
        limits = [limit for limit in (self.spec.context, limit_of_model) if limit]
        if limits and needed > min(limits):
            raise InputError(f"model {self.spec.model!r}: a prompt of {prompt_tokens} tokens needs {needed} positions "
                             f"with the answer, more than its context of {min(limits)}")

    def count_tokens(self, sent: str) -> int:
        """The tokens of a rendered prompt as the model receives them."""
        return int(self._encode(sent)["input_ids"].shape[1])

    def _encode(self, sent: str | list[str]):
        """Token ids and attention mask of one prompt, or of several padded on the left (where a causal model's
        continuation starts at the same place in every row)."""
        if isinstance(sent, list):
            self.tokenizer.padding_side = "left"
            if self.tokenizer.pad_token_id is None:
                self.tokenizer.pad_token = self.tokenizer.eos_token
        return self.tokenizer(sent, add_special_tokens=wrappers.adds_special_tokens(self.spec.wrapper),
                              return_tensors="pt", padding=isinstance(sent, list))

    def check(self, sent: str, decoding: Decoding) -> None:
        require_greedy(self.spec, decoding)
        self._check_prompt(self._encode(sent)["input_ids"].shape[1], decoding)

    def _generate(self, sent: str | list[str], decoding: Decoding):
        """(prompt length, output ids, generation config) of a greedy generation: the one sequence's ids for one
        prompt, a row per prompt (padded prompts, then the generated ids) for a list."""
        import torch

        for each in sent if isinstance(sent, list) else [sent]:
            self.check(each, decoding)
        encoded = self._encode(sent)
        config = self._generation_config(decoding)
        # Stop strings end generation as soon as one is decoded (transformers matches them across token
        # boundaries); the text is still cut at the first one below.
        stopping = {"stop_strings": list(decoding.stop), "tokenizer": self.tokenizer} if decoding.stop else {}
        with torch.inference_mode():
            output = self.model.generate(input_ids=encoded["input_ids"].to(self.device),
                                         attention_mask=encoded["attention_mask"].to(self.device),
                                         generation_config=config, **stopping)
        output = output.cpu()
        return encoded["input_ids"].shape[1], output if isinstance(sent, list) else output[0], config

    def _check_prompt(self, prompt_tokens: int, decoding: Decoding) -> None:
        raise NotImplementedError

    def _own_ids(self, ids: list[int], config, decoding: Decoding) -> list[int]:
        """One row of a batch as generating it alone gives it: a row that finished first (at an EOS id, or once
        its text holds a stop string) is filled with the pad id, which may be an EOS id, until the last row ends;
        a row that never finished ran to the end."""
        eos = set(_ids(config.eos_token_id))
        for end in range(1, len(ids) + 1):
            if ids[end - 1] in eos:
                return ids[:end]
            if decoding.stop:
                text = self.tokenizer.decode(ids[:end], skip_special_tokens=True)
                if any(stop in text for stop in decoding.stop):
                    return ids[:end]
        return ids

    def _answer(self, generated, config, decoding: Decoding) -> Answer:
        ids = generated if isinstance(generated, list) else generated.tolist()
        eos = set(_ids(config.eos_token_id))
        finish = "stop" if eos.intersection(ids) else "length"
        text, stopped = cut_at_stop(self.tokenizer.decode(ids, skip_special_tokens=True), decoding.stop)
        return Answer(text, "stop" if stopped else finish, None, len(ids))


class HFCausal(_HFBackend):
    LOADER = "AutoModelForCausalLM"

    def _check_prompt(self, prompt_tokens: int, decoding: Decoding) -> None:
        limit = getattr(self.config, "max_position_embeddings", None) or getattr(self.config, "n_positions", None)
        self._check_context(prompt_tokens, prompt_tokens + decoding.max_new_tokens, limit)

    def complete(self, sent: str, decoding: Decoding, meta: Mapping | None = None) -> Answer:
        prompt_tokens, output, config = self._generate(sent, decoding)
        answer = self._answer(output[prompt_tokens:], config, decoding)
        return Answer(answer.text, answer.finish_reason, prompt_tokens, answer.completion_tokens)

    def next_token_logprobs(self, sents: list[str], words: Sequence[str]):
        """For each prompt (rows), the log-probability of each word's first token being the next one (columns), as
        a float64 array: one forward pass per `batch_size` prompts padded on the left (the last position is then
        every row's next token). A pointwise ranker reads "yes" against "no" here (`posbias.audit.llm_ranker`)."""
        import numpy as np
        import torch

        first = [self.tokenizer(word, add_special_tokens=False)["input_ids"][0] for word in words]
        # a model whose forward takes no position ids (some remote code) reads the mask alone
        accepts_positions = "position_ids" in inspect.signature(self.model.forward).parameters
        rows = []
        for start in range(0, len(sents), self.batch_size):
            batch = list(sents[start:start + self.batch_size])
            encoded = self._encode(batch)
            limit = getattr(self.config, "max_position_embeddings", None)
            for length in encoded["attention_mask"].sum(dim=1).tolist():
                self._check_context(length, length + 1, limit)
            mask = encoded["attention_mask"]
            # positions count from each prompt's first real token, as alone (a model with absolute positions
            # would otherwise read a padded prompt shifted)
            positions = (mask.cumsum(dim=1) - 1).clamp(min=0)
            extra = {"position_ids": positions.to(self.device)} if accepts_positions else {}
            with torch.inference_mode():
                logits = self.model(input_ids=encoded["input_ids"].to(self.device), attention_mask=mask.to(self.device),
                                    **extra).logits[:, -1]
            rows.append(torch.log_softmax(logits.double(), dim=-1)[:, first].cpu().numpy())
        return np.concatenate(rows) if rows else np.empty((0, len(words)))

    def complete_batch(self, sents: list[str], decoding: Decoding, metas: list[Mapping | None]) -> list[Answer]:
        if len(sents) == 1:
            return [self.complete(sents[0], decoding, metas[0])]
        padded, output, config = self._generate(list(sents), decoding)
        answers = []
        for sent, row in zip(sents, output, strict=True):
            answer = self._answer(self._own_ids(row[padded:].tolist(), config, decoding), config, decoding)
            answers.append(Answer(answer.text, answer.finish_reason, self.count_tokens(sent),
                                  answer.completion_tokens))
        return answers


class HFSeq2Seq(_HFBackend):
    """The input is never truncated (T5's relative positions take any length); only `spec.context`, when
    set, limits it."""

    LOADER = "AutoModelForSeq2SeqLM"

    def _check_prompt(self, prompt_tokens: int, decoding: Decoding) -> None:
        self._check_context(prompt_tokens, prompt_tokens, None)

    def complete(self, sent: str, decoding: Decoding, meta: Mapping | None = None) -> Answer:
        prompt_tokens, output, config = self._generate(sent, decoding)
        answer = self._answer(output[1:], config, decoding)  # output[0] is the decoder's start token
        return Answer(answer.text, answer.finish_reason, prompt_tokens, answer.completion_tokens)


def _ids(value) -> list[int]:
    if value is None:
        return []
    return [value] if isinstance(value, int) else list(value)
