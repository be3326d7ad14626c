"""Local Hugging Face models: `hf_causal` (decoder-only, `AutoModelForCausalLM`) and `hf_seq2seq`
(encoder-decoder, `AutoModelForSeq2SeqLM`).

`spec.model` is a local directory or an `offline:` name (`posbias.backbones`). Options:

- `device`: auto (the GPU when torch sees one, else the CPU; `posbias.device.pick_device`, which stops a job that
  SLURM gave a GPU torch cannot see), cpu, cuda or cuda:N;
- `dtype` of the weights: auto (bfloat16 on a GPU that has it, else float32; a CPU keeps float32, so its answers
  are those it always gave), float32, bfloat16 (a CPU runs it too, emulated and slow without native bf16) or
  float16 (GPU only). The resolved dtype is part of the cache key, since it changes answers; float32 is what
  every answer recorded before `auto` says, so those replay;
- `batch_size`: prompts a causal model decodes together; auto: 8 on a GPU, 1 on a CPU (answers exactly as one at
  a time; a batch could break a near-tie differently);
- `trust_remote_code`: false unless the config opts in.

Decoding is greedy. With `batch_size` > 1 a causal model decodes that many prompts together, padded on the left
and masked: each new token then reads the weights once for all of them, which token-by-token decoding spends most
of its time on. Padding changes the order of floating-point sums, so a near-tie between two tokens
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
import logging
from pathlib import Path
from typing import Mapping, Sequence

from posbias.backbones import from_pretrained, load_model, load_tokenizer, resolve
from posbias.errors import InputError
from posbias.llm import wrappers
from posbias.llm.backends.base import Answer, Backend, cut_at_stop, package_version, require_greedy
from posbias.llm.spec import ModelSpec
from posbias.llm.types import Decoding, Request

log = logging.getLogger(__name__)

DTYPES = ("auto", "float32", "bfloat16", "float16")
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
    GPU_BATCH = 1  # `batch_size: auto` on a GPU (a CPU answers one at a time); only a causal model batches

    def __init__(self, spec: ModelSpec):
        super().__init__(spec)
        self.dtype_option = spec.options.get("dtype", "auto")
        if self.dtype_option not in DTYPES:
            raise InputError(f"model {spec.model!r}: options.dtype {self.dtype_option!r} is not one of "
                             f"{', '.join(DTYPES)}")
        self.device_option = spec.options.get("device", "auto")
        self.trust_remote_code = spec.options.get("trust_remote_code", False) is True
        batch_size = spec.options.get("batch_size", "auto")
        if batch_size != "auto" and (isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1):
            raise InputError(f"model {spec.model!r}: options.batch_size {batch_size!r} is not auto or a whole "
                             "number >= 1")
        self.batch_option = batch_size
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
        return {**super().identity(), "revision": revision, "dtype": self.dtype}  # resolved: auto never enters a key

    def identity(self) -> dict:
        return dict(self._identity)

    def render(self, request: Request) -> str:
        tokenizer = self.tokenizer if self.spec.wrapper == "chat_template" else None
        return wrappers.render(self.spec.wrapper, request, tokenizer)

    def sdk(self) -> dict:
        return package_version("transformers")

    @functools.cached_property
    def device(self):
        from posbias.device import pick_device

        return pick_device(self.device_option)

    @functools.cached_property
    def dtype(self) -> str:
        """The weights' dtype: `options.dtype`, or for auto bfloat16 on a GPU that has it and float32 elsewhere."""
        if self.dtype_option != "auto":
            return self.dtype_option
        import torch

        if self.device.type != "cuda":
            return "float32"
        with torch.cuda.device(self.device):  # the job's GPU; emulated bf16 (before Ampere) is slow: fp32 there
            return "bfloat16" if torch.cuda.is_bf16_supported(including_emulation=False) else "float32"

    @functools.cached_property
    def batch_size(self) -> int:
        if self.batch_option != "auto":
            return self.batch_option
        return self.GPU_BATCH if self.device.type == "cuda" else 1

    def prompt_length(self, sent: str) -> int:
        return self.count_tokens(sent)

    def prepare(self) -> None:
        _ = self.model  # loads the weights

    @property
    def model(self):
        if self._model is None:
            import torch
            import transformers

            from posbias.device import cpu_has_native_bf16

            if self.device.type == "cpu" and self.dtype == "float16":
                raise InputError(f"model {self.spec.model!r}: options.dtype float16 needs a GPU (device cpu); "
                                 "bfloat16 and float32 run on a CPU")
            if self.device.type == "cpu" and self.dtype == "bfloat16" and not cpu_has_native_bf16():
                log.warning("%s: bfloat16 on a CPU without native bf16 instructions is emulated, slower than "
                            "float32", self.spec.model)
            loader = getattr(transformers, self.LOADER)
            # on a GPU the weights go straight there, shard by shard (a 30B model in bf16 would otherwise pass
            # through 60 GB of host memory); the CPU path loads as it always has
            placement = {"device_map": str(self.device)} if self.device.type == "cuda" else {}
            model = load_model(loader, self.spec.model, "language model", dtype=getattr(torch, self.dtype),
                                    trust_remote_code=self.trust_remote_code, **placement)
            self._model = model.to(self.device).eval()
            log.info("%s: %s weights on %s, batches of %d", self.spec.model, self.dtype, self.device,
                     self.batch_size)
        return self._model

    def _generation_config(self, decoding: Decoding):
        """The model's own generation settings (its EOS ids) made greedy, with no sampling leftovers."""
        config = copy.deepcopy(self.model.generation_config)
        config.do_sample = False
        config.temperature = config.top_p = config.top_k = None
        config.num_beams = 1
        config.max_new_tokens = decoding.max_new_tokens
        # Stop strings end generation as soon as one is decoded (transformers matches them across token
        # boundaries, with the tokenizer passed to generate); the text is still cut at the first one.
        config.stop_strings = list(decoding.stop) or None
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
        """(prompt lengths, padded width, output ids, generation config) of a greedy generation: the one
        sequence's ids for one prompt, a row per prompt (padded prompts, then the generated ids) for a list. The
        prompts are tokenised once: each one's length is its row of the attention mask."""
        import torch

        require_greedy(self.spec, decoding)
        encoded = self._encode(sent)
        lengths = encoded["attention_mask"].sum(dim=1).tolist()
        for length in lengths:
            self._check_prompt(length, decoding)
        config = self._generation_config(decoding)
        stopping = {"tokenizer": self.tokenizer} if decoding.stop else {}
        with torch.inference_mode():
            output = self.model.generate(input_ids=encoded["input_ids"].to(self.device),
                                         attention_mask=encoded["attention_mask"].to(self.device),
                                         generation_config=config, **stopping)
        output = output.cpu()
        return lengths, encoded["input_ids"].shape[1], output if isinstance(sent, list) else output[0], config

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


# What answers a request that changes how the model attends (`meta["attention"]`): registered by the module that
# knows the request's documents (`posbias.reading.attention_mitigations`, on import), so this layer imports nothing
# above it; `(backend, sent, decoding, meta) -> Answer`.
ATTENTION_ANSWERER = None


def register_attention_answerer(answerer) -> None:
    global ATTENTION_ANSWERER
    ATTENTION_ANSWERER = answerer


class HFCausal(_HFBackend):
    LOADER = "AutoModelForCausalLM"
    GPU_BATCH = 8  # a GPU decodes 8 prompts about as fast as one: the weights are read once per token for all

    def _check_prompt(self, prompt_tokens: int, decoding: Decoding) -> None:
        limit = getattr(self.config, "max_position_embeddings", None) or getattr(self.config, "n_positions", None)
        self._check_context(prompt_tokens, prompt_tokens + decoding.max_new_tokens, limit)

    def key_fields(self, request: Request) -> dict:
        """A reader's attention mitigation (`meta["attention"]`) changes the answer: it enters the key."""
        attention = (request.meta or {}).get("attention")
        return {"attention_mitigation": dict(attention)} if attention else {}

    def complete(self, sent: str, decoding: Decoding, meta: Mapping | None = None) -> Answer:
        if (meta or {}).get("attention"):  # one prompt at a time, by the answerer registered for it
            if ATTENTION_ANSWERER is None:
                raise InputError(f"model {self.spec.model!r}: a request asks for an attention mitigation, but none "
                                 f"is registered (import posbias.reading.attention_mitigations first)")
            return ATTENTION_ANSWERER(self, sent, decoding, meta)
        [prompt_tokens], _, output, config = self._generate(sent, decoding)
        answer = self._answer(output[prompt_tokens:], config, decoding)
        return Answer(answer.text, answer.finish_reason, prompt_tokens, answer.completion_tokens)

    def next_token_logprobs(self, sents: list[str], words: Sequence[str]):
        """For each prompt (rows), the log-probability of each word's first token being the next one (columns), as
        a float64 array: one forward pass per `batch_size` prompts padded on the left (the last position is then
        every row's next token). A pointwise ranker reads "yes" against "no" here (`posbias.scoring.llm_ranker`)."""
        import numpy as np
        import torch

        first = [self.tokenizer(word, add_special_tokens=False)["input_ids"][0] for word in words]
        accepts = inspect.signature(self.model.forward).parameters
        # only the last position's logits are read: the output layer over every position would add about a
        # quarter to a small model's forward (SmolLM2-135M: a 49,152-word vocabulary on 576 dimensions)
        last_only = {"logits_to_keep": 1} if "logits_to_keep" in accepts else {}
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
            # a model whose forward takes no position ids (some remote code) reads the mask alone
            extra = {"position_ids": positions.to(self.device)} if "position_ids" in accepts else {}
            with torch.inference_mode():
                logits = self.model(input_ids=encoded["input_ids"].to(self.device), attention_mask=mask.to(self.device),
                                    **extra, **last_only).logits[:, -1]
            rows.append(torch.log_softmax(logits.double(), dim=-1)[:, first].cpu().numpy())
        return np.concatenate(rows) if rows else np.empty((0, len(words)))

    def complete_batch(self, sents: list[str], decoding: Decoding, metas: list[Mapping | None]) -> list[Answer]:
        if len(sents) == 1 or any((meta or {}).get("attention") for meta in metas):
            return [self.complete(sent, decoding, meta) for sent, meta in zip(sents, metas, strict=True)]
        lengths, padded, output, config = self._generate(list(sents), decoding)
        answers = []
        for length, row in zip(lengths, output, strict=True):
            answer = self._answer(self._own_ids(row[padded:].tolist(), config, decoding), config, decoding)
            answers.append(Answer(answer.text, answer.finish_reason, length, answer.completion_tokens))
        return answers


class HFSeq2Seq(_HFBackend):
    """The input is never truncated (T5's relative positions take any length); only `spec.context`, when
    set, limits it."""

    LOADER = "AutoModelForSeq2SeqLM"

    def _check_prompt(self, prompt_tokens: int, decoding: Decoding) -> None:
        self._check_context(prompt_tokens, prompt_tokens, None)

    def complete(self, sent: str, decoding: Decoding, meta: Mapping | None = None) -> Answer:
        [prompt_tokens], _, output, config = self._generate(sent, decoding)
        answer = self._answer(output[1:], config, decoding)  # output[0] is the decoder's start token
        return Answer(answer.text, answer.finish_reason, prompt_tokens, answer.completion_tokens)


def _ids(value) -> list[int]:
    if value is None:
        return []
    return [value] if isinstance(value, int) else list(value)
