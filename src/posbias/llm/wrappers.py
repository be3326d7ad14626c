"""Prompt wrappers: how a raw prompt becomes exactly what a model is sent.

A wrapper is always named in the model's config, never guessed from the model's name: the Lost-in-the-Middle
results depend on the exact template, and a wrong guess would go unnoticed. Every wrapper but `messages` gives
one string; `messages` gives a chat API's message list. The rendered text is part of the cache key, so one
changed byte of a template never replays an answer made with the old one.

Tokenising a rendered string: a `chat_template` result already holds the model's special tokens (BOS
included), so it is tokenised without adding them again; every other string wrapper is tokenised as the
tokenizer normally does, with them (`adds_special_tokens`).
"""

from __future__ import annotations

from posbias.errors import InputError
from posbias.llm.types import Request

# Meta's default system prompt for the Llama-2 chat models, as their reference code sends it.
LLAMA2_DEFAULT_SYSTEM = (
    "You are a helpful, respectful and honest assistant. Always answer as helpfully as possible, while being "
    "safe. Your answers should not include any harmful, unethical, racist, sexist, toxic, dangerous, or illegal "
    "content. Please ensure that your responses are socially unbiased and positive in nature.\n\n"
    "If a question does not make any sense, or is not factually coherent, explain why instead of answering "
    "something not correct. If you don't know the answer to a question, please don't share false information."
)

_LLAMA2 = "[INST] <<SYS>>\n{system}\n<</SYS>>\n\n{prompt} [/INST]"

# The string templates, `{prompt}` filled in verbatim (str.replace, so braces in a prompt are safe).
TEMPLATES = {
    "none": "{prompt}",
    "mpt_instruct": ("Below is an instruction that describes a task. Write a response that appropriately "
                     "completes the request.\n### Instruction:\n{prompt}\n### Response:\n"),
    "vicuna": ("A chat between a curious user and an artificial intelligence assistant. The assistant gives "
               "helpful, detailed, and polite answers to the user's questions. USER: {prompt} ASSISTANT:"),
    # The tokenizer adds BOS in front.
    "llama2_chat": _LLAMA2.replace("{system}", LLAMA2_DEFAULT_SYSTEM),
    # The same with a literal "<s>" in front: the Lost-in-the-Middle authors' code put one in the text and the
    # tokenizer added BOS again, so their Llama-2 prompts began with two BOS tokens; this reproduces that.
    "llama2_chat_anchor": "<s>" + _LLAMA2.replace("{system}", LLAMA2_DEFAULT_SYSTEM),
    # Anthropic's legacy text-completions format.
    "human_assistant": "\n\nHuman: {prompt}\n\nAssistant:",
}

WRAPPERS = ("none", "chat_template", "mpt_instruct", "vicuna", "llama2_chat", "llama2_chat_anchor",
            "human_assistant", "messages")


def check(wrapper: str) -> str:
    """`wrapper` if it is a known wrapper name; otherwise an `InputError` listing the known ones."""
    if wrapper not in WRAPPERS:
        raise InputError(f"unknown prompt wrapper {wrapper!r}; known: {', '.join(WRAPPERS)}")
    return wrapper


def adds_special_tokens(wrapper: str) -> bool:
    """Whether a string rendered by `wrapper` is tokenised with the tokenizer's special tokens added."""
    return check(wrapper) != "chat_template"


def render(wrapper: str, request: Request, tokenizer=None) -> str | list[dict]:
    """What is sent for `request` under `wrapper`: a string, or for `messages` a list of message dicts.
    `tokenizer` is needed by `chat_template` only."""
    check(wrapper)
    if wrapper == "messages":
        if request.messages is not None:
            return [dict(message) for message in request.messages]
        return [{"role": "user", "content": request.prompt}]
    if wrapper == "chat_template":
        return _chat_template(request, tokenizer)
    if request.messages is not None:
        raise InputError(f"prompt wrapper {wrapper!r} takes a text prompt, not chat messages; messages need "
                         "wrapper chat_template (a local model) or messages (a chat API)")
    return TEMPLATES[wrapper].replace("{prompt}", request.prompt)


def _chat_template(request: Request, tokenizer) -> str:
    if tokenizer is None:
        raise InputError("prompt wrapper 'chat_template' needs the model's tokenizer (a local model)")
    if not getattr(tokenizer, "chat_template", None):
        raise InputError(f"prompt wrapper 'chat_template': the tokenizer of {tokenizer.name_or_path!r} has no "
                         "chat template; name an explicit wrapper instead")
    messages = ([dict(message) for message in request.messages] if request.messages is not None
                else [{"role": "user", "content": request.prompt}])
    return tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
