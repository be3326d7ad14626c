"""Running a model's own code (`trust_remote_code`): which class it is, how it is built, what it returns.

A hub repository with its own code names its classes in config.json's `auto_map`. MOSAIC BERT
(mosaicml/mosaic-bert-base*) names only `AutoConfig` and `AutoModelForMaskedLM`; asked for an `AutoModel`,
transformers falls back on its own class for the config's `model_type` (BERT) and keeps only the weights whose
names fit. So a backbone's class is found here (`backbone_class`): the `AutoModel` the map names, else its masked
language model (or pre-training model), whose base model (`base_model`, MOSAIC's `.bert`) is the backbone.

Code of this kind was written for transformers 4, which built a model on the CPU before loading its weights;
transformers 5 builds it on the meta device, where MOSAIC's ALiBi set-up (a plain tensor computed in
`__init__`) fails. `built_off_meta` builds such a class on the CPU for the duration of a load.

MOSAIC's BertModel returns a tuple (last hidden states, pooled or None) and ignores `output_hidden_states`;
`model_output` makes it answer as transformers' models do (`last_hidden_state`, `pooler_output`, no
`hidden_states`), so every caller reads one shape.

Its Triton kernels are turned off after loading (`disable_remote_kernels`: MOSAIC's early FlashAttention, which
modern Triton cannot compile).
"""

from __future__ import annotations

import logging
import sys
from contextlib import contextmanager

log = logging.getLogger(__name__)

# The auto classes whose model holds a backbone, in the order they are looked for in an `auto_map`.
BACKBONE_AUTO_CLASSES = ("AutoModel", "AutoModelForMaskedLM", "AutoModelForPreTraining")


def is_remote_code(model) -> bool:
    """Whether a model (or a class) comes from a model directory's own code (transformers' dynamic modules)."""
    from transformers.utils import TRANSFORMERS_DYNAMIC_MODULE_NAME

    cls = model if isinstance(model, type) else type(model)
    return cls.__module__.startswith(TRANSFORMERS_DYNAMIC_MODULE_NAME + ".")


def backbone_class(config, path: str):
    """The class of the config's own code that holds its backbone (`BACKBONE_AUTO_CLASSES`), imported from `path`;
    None when its `auto_map` names none (then transformers' class for its `model_type` is the backbone's)."""
    from transformers.dynamic_module_utils import get_class_from_dynamic_module

    auto_map = getattr(config, "auto_map", None) or {}
    for auto_class in BACKBONE_AUTO_CLASSES:
        if auto_class in auto_map:
            return get_class_from_dynamic_module(auto_map[auto_class], path)
    return None


@contextmanager
def built_off_meta(cls):
    """`cls.from_pretrained` builds the model on the CPU (in the dtype asked for, its weights initialised and its
    buffers computed by its own code), then loads the checkpoint into it, as transformers 4 did. Two methods of
    the class are replaced for the duration: `get_init_context` without its meta device, and the step that would
    give whatever the checkpoint lacks (non-persistent buffers: BERT's position ids) an empty tensor to replace
    a meta one, of which there are none."""
    import torch

    replaced = {name: cls.__dict__.get(name) for name in ("get_init_context", "_move_missing_keys_from_meta_to_device")}
    inherited = cls.get_init_context

    def contexts(klass, *args, **kwargs):
        return [context for context in inherited(*args, **kwargs)
                if not (isinstance(context, torch.device) and context.type == "meta")]

    cls.get_init_context = classmethod(contexts)
    cls._move_missing_keys_from_meta_to_device = lambda self, *args, **kwargs: None
    try:
        yield cls
    finally:
        for name, own in replaced.items():
            if own is None:
                delattr(cls, name)
            else:
                setattr(cls, name, own)


def model_output(model) -> None:
    """Make a base model that returns a plain tuple (MOSAIC's `(last hidden states, pooled)`) return a
    `BaseModelOutputWithPooling` instead, by a forward hook; a model returning a `ModelOutput` is left alone."""
    from transformers.modeling_outputs import BaseModelOutputWithPooling
    from transformers.utils import ModelOutput

    def as_model_output(module, args, output):
        if isinstance(output, ModelOutput) or not isinstance(output, tuple):
            return output
        states, pooled = (tuple(output) + (None,))[:2]
        return BaseModelOutputWithPooling(last_hidden_state=states, pooler_output=pooled)

    model.register_forward_hook(as_model_output)


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
    modules = sorted({type(layer).__module__ for layer in model.modules() if is_remote_code(layer)})
    forced = []
    for module_name in modules:
        module = sys.modules.get(module_name)
        if module is None:
            continue
        for name in REMOTE_KERNELS:
            if getattr(module, name, None) is not None:
                setattr(module, name, None)
                forced.append(f"{module_name}.{name}")
    if forced:
        log.info("remote code's Triton attention kernel turned off (%s): its PyTorch attention runs instead",
                 ", ".join(forced))
    return forced
