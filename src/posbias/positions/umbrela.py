"""UMBRELA's zero-shot "bing" prompt (Upadhyay et al. 2024, "UMBRELA: UMbrela is the (Open-Source
Reproduction of the) Bing RELevance Assessor"): a query and a passage, graded 0-3, answered as
`##final score: N`. The long-document study judged each chunk with it (GPTJudge, prompt_type "bing",
gpt-4o-mini). The prompt text is the method's, verbatim, trailing spaces included (they are sent).
"""

from __future__ import annotations

import re

PROMPT = (
    "Given a query and a passage, you must provide a score on an integer scale of 0 to 3 with the following "
    "meanings:\n"
    "0 = represent that the passage has nothing to do with the query, \n"
    "1 = represents that the passage seems related to the query but does not answer it, \n"
    "2 = represents that the passage has some answer for the query, but the answer may be a bit unclear, or hidden "
    "amongst extraneous information and \n"
    "3 = represents that the passage is dedicated to the query and contains the exact answer.\n\n"
    "Important Instruction: Assign category 1 if the passage is somewhat related to the topic but not completely, "
    "category 2 if passage presents something very important related to the entire topic but also has some extra "
    "information and category 3 if the passage only and entirely refers to the topic. If none of the above "
    "satisfies give it category 0.\n\n"
    "Query: {query}\nPassage: {passage}\n\n"
    "Split this problem into steps:\n"
    "Consider the underlying intent of the search.\n"
    "Measure how well the content matches a likely intent of the query (M).\n"
    "Measure how trustworthy the passage is (T).\n"
    "Consider the aspects above and the relative importance of each, and decide on a final score (O). Final score "
    "must be an integer value only.\n"
    "Do not provide any code in result. Provide each score in the format of: ##final score: score without "
    "providing any reasoning."
)
GRADES = (0, 1, 2, 3)
# "##final score: 2", "Final Score = **2**", "final score:2/3": the number after the last "final score".
_FINAL = re.compile(r"final\s*score\s*[:=]?\s*\**\s*(\d+)", re.IGNORECASE)
_BARE = re.compile(r"^\W*(\d+)\W*$")  # an answer that is only a number ("2", "**3**.")


def prompt(query: str, passage: str) -> str:
    # str.replace, not format: a passage or query with braces must stay as written
    return PROMPT.replace("{query}", query, 1).replace("{passage}", passage, 1)


def answer_for(grade: int) -> str:
    """The answer a compliant judge gives for `grade` (what the mock oracle is told to say)."""
    return f"##final score: {grade}"


def parse_grade(answer: str) -> int | None:
    """The grade in a judge's answer, or None when there is none in 0-3: the number after the last
    "final score" (a judge sometimes restates the format before answering), else an answer that is only a
    number. Anything else (reasoning without a score, a score out of range) is unparseable."""
    found = _FINAL.findall(answer)
    if found:
        value = int(found[-1])
    else:
        bare = _BARE.match(answer.strip())
        if not bare:
            return None
        value = int(bare.group(1))
    return value if value in GRADES else None
