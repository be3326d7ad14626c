"""RankGPT's permutation prompt: the chat messages that ask a model to rank one window of passages.

The wording is RankGPT's (Sun et al. 2023), character for character, including its grammar ("Only response
the ranking results"): the study's numbers were made with it.
"""

from __future__ import annotations

from typing import Sequence

SYSTEM = "You are RankGPT, an intelligent assistant that can rank passages based on their relevancy to the query."
INTRO = ("I will provide you with {num} passages, each indicated by number identifier []. \n"
         "Rank the passages based on their relevance to query: {query}.")
READY = "Okay, please provide the passages."
PASSAGE = "[{i}] {content}"
RECEIVED = "Received passage [{i}]."
POST = ("Search Query: {query}. \nRank the {num} passages above based on their relevance to the search query. "
        "The passages should be listed in descending order using identifiers. The most relevant passages should "
        "be listed first. The output format should be [] > [], e.g., [1] > [2]. Only response the ranking "
        "results, do not say any word or explain.")


def passage_content(text: str, max_words: int | None) -> str:
    """The passage as the prompt shows it: stripped and, with `max_words`, its first `max_words` whitespace
    words joined by single spaces (the authors' code kept RankGPT's 300 even for "LongP"; None keeps all)."""
    text = text.strip()
    if max_words is None:
        return text
    return " ".join(text.split()[:max_words])


def permutation_messages(query: str, passages: Sequence[str], max_words: int | None = None) -> tuple[dict, ...]:
    """The conversation for one window: the task, each passage acknowledged in turn (identifiers 1, 2, ...),
    then the request for the ranking."""
    num = len(passages)
    messages = [{"role": "system", "content": SYSTEM},
                {"role": "user", "content": INTRO.format(num=num, query=query)},
                {"role": "assistant", "content": READY}]
    for i, text in enumerate(passages, start=1):
        messages.append({"role": "user", "content": PASSAGE.format(i=i, content=passage_content(text, max_words))})
        messages.append({"role": "assistant", "content": RECEIVED.format(i=i)})
    messages.append({"role": "user", "content": POST.format(query=query, num=num)})
    return tuple(messages)
