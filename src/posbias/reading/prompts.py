"""The authors' prompt templates, byte for byte (spec §3; their `prompts/*.prompt` files, read with
`.rstrip("\\n")`, so no template ends in a newline).

- documents are written `Document [i](Title: {title}) {text}`, `i` counted from 1 in prompt order, with no
  space between `]` and `(Title:`, and joined by single newlines;
- the closed-book prompt has no instruction line;
- key-value records are formatted by hand, not with `json.dumps` (`{"k1": "v1",\\n "k2": "v2"}`), and neither
  keys nor values are escaped, as in the authors' code;
- query-aware contextualization (the question or key before and after the data) cannot be combined with the
  "ordered randomly" instruction: the authors' code refuses it, and so does this one (quirk 17, kept).

The model-specific wrappers (instruction and chat templates) are applied later by `posbias.llm`.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from posbias.errors import InputError

QA_INSTRUCTION = ("Write a high-quality answer for the given question using only the provided search results "
                  "(some of which might be irrelevant).")
RANDOM_ORDER_NOTE = " The search results are ordered randomly."
KV_INSTRUCTION = "Extract the value corresponding to the specified key in the JSON object below."

QA_TEMPLATE = "{instruction}\n\n{search_results}\n\nQuestion: {question}\nAnswer:"
QA_QUERY_AWARE_TEMPLATE = "{instruction}\n\nQuestion: {question}\n\n{search_results}\n\nQuestion: {question}\nAnswer:"
CLOSEDBOOK_TEMPLATE = "Question: {question}\nAnswer:"
KV_TEMPLATE = '{instruction}\n\nJSON data:\n{records}\n\nKey: "{key}"\nCorresponding value:'
KV_QUERY_AWARE_TEMPLATE = '{instruction}\n\nKey: "{key}"\n\nJSON data:\n{records}\n\nKey: "{key}"\nCorresponding value:'


def format_document(index: int, document: Mapping) -> str:
    """One search result; `index` counts from 1."""
    return f"Document [{index}](Title: {document['title']}) {document['text']}"


def format_documents(documents: Sequence[Mapping]) -> str:
    return "\n".join(format_document(i, document) for i, document in enumerate(documents, start=1))


def qa_prompt(question: str, documents: Sequence[Mapping], mention_random_ordering: bool = False,
              query_aware: bool = False) -> str:
    """The multi-document QA prompt over `documents` (mappings with `title` and `text`) in the given order."""
    if not question:
        raise InputError("a QA prompt needs a non-empty question")
    if not documents:
        raise InputError(f"a QA prompt needs documents (question {question!r}); use the closed-book prompt")
    if mention_random_ordering and query_aware:
        raise InputError("the 'ordered randomly' instruction cannot be combined with query-aware "
                         "contextualization (the authors' code refuses it too)")
    instruction = QA_INSTRUCTION + (RANDOM_ORDER_NOTE if mention_random_ordering else "")
    template = QA_QUERY_AWARE_TEMPLATE if query_aware else QA_TEMPLATE
    return template.format(instruction=instruction, search_results=format_documents(documents), question=question)


def closedbook_prompt(question: str) -> str:
    if not question:
        raise InputError("a closed-book prompt needs a non-empty question")
    return CLOSEDBOOK_TEMPLATE.format(question=question)


def format_kv_records(records: Sequence[Sequence[str]]) -> str:
    """`{"k1": "v1",\\n "k2": "v2"}`: the first pair opens with `{`, the others with a space; every pair but
    the last ends with `,` and a newline, the last with `}`."""
    last = len(records) - 1
    return "".join(("{" if i == 0 else " ") + f'"{key}": "{value}"' + (",\n" if i < last else "}")
                   for i, (key, value) in enumerate(records))


def kv_prompt(records: Sequence[Sequence[str]], key: str, query_aware: bool = False) -> str:
    """The key-value retrieval prompt; refuses what the authors' code refuses (an absent key, duplicate keys,
    fewer than two pairs)."""
    if not key:
        raise InputError("a key-value prompt needs a non-empty key")
    keys = [pair[0] for pair in records]
    if len(records) < 2:
        raise InputError(f"a key-value prompt needs at least 2 pairs, got {len(records)}")
    if key not in keys:
        raise InputError(f"key {key!r} is not among the {len(records)} pairs")
    if len(set(keys)) != len(keys):
        raise InputError("the key-value pairs repeat a key")
    template = KV_QUERY_AWARE_TEMPLATE if query_aware else KV_TEMPLATE
    return template.format(instruction=KV_INSTRUCTION, records=format_kv_records(records), key=key)
