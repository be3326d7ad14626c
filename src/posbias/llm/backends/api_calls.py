"""One call to an API through its official SDK (openai or anthropic, which share their exception types), and
what makes its answer usable.

A failure worth a retry becomes a `TransientError` whose message is the call's status, written here from the
SDK's exception type, the HTTP status and the content type, never copied from a request or a body, so it holds
no secret:

- a connection that failed or a server that stayed silent past `timeout_s` (`APIConnectionError`,
  `APITimeoutError`);
- a transient HTTP status (`APIStatusError` with 408, 409, 429 or 5xx);
- an HTTP success whose body is not JSON, such as a proxy's error page. The SDKs raise nothing of their own for
  it: under a JSON content type their parse raises the JSON decoder's `json.JSONDecodeError`, under any other it
  hands back the body's text. Calls therefore go through `with_raw_response`, whose status and content type
  name the failure;
- JSON that is not the API's answer (no `choices`, no `content`): the SDKs build their models without
  validating, so each backend checks the fields it reads (`NotTheAnswer`).

Such an answer never reaches the cache: a retry asks again.
"""

from __future__ import annotations

import json
import re
from urllib.parse import urlsplit, urlunsplit

from posbias.llm.backends.base import TransientError


def is_transient_status(status: int | None) -> bool:
    """HTTP statuses worth a retry: timeout, conflict, rate limit, server errors (and Anthropic's 529)."""
    return status is not None and (status in (408, 409, 429) or status >= 500)


class RequestRefused(Exception):
    """A status no retry mends (a refused key, an unknown model or path, a bad request): something to fix in the
    model's settings. The message is the SDK's exception type and the HTTP status, never a body."""


def send(sdk, timeout_s: float, create, **options):
    """`create(**options)`, a `with_raw_response` method of an SDK client (`sdk`: the openai or anthropic
    module), with its transient failures as `TransientError` and the others (a refused key, a bad request) as
    `RequestRefused`."""
    try:
        return create(**options)
    except sdk.APITimeoutError as err:  # before its parent class, APIConnectionError
        raise TransientError(f"no answer within timeout_s {timeout_s:g} s ({type(err).__name__})") from err
    except sdk.APIConnectionError as err:
        cause = f" ({type(err.__cause__).__name__})" if err.__cause__ is not None else ""
        raise TransientError(f"{type(err).__name__}{cause}") from err
    except sdk.APIStatusError as err:
        if is_transient_status(err.status_code):
            raise TransientError(f"{type(err).__name__} (HTTP {err.status_code})") from err
        raise RequestRefused(f"{type(err).__name__} (HTTP {err.status_code})") from err


def parse(raw):
    """The SDK's model of a raw response; a body that is not JSON is a `TransientError` naming the status."""
    try:
        answer = raw.parse()
    except json.JSONDecodeError as err:
        raise TransientError(f"{status(raw)} with a body that is not JSON (content type {media_type(raw)})") from err
    if isinstance(answer, str):  # what the SDK hands back for a body whose content type is not JSON
        raise TransientError(f"{status(raw)} with a body that is not JSON (content type {media_type(raw)})")
    return answer


class NotTheAnswer(TransientError):
    """JSON that lacks a field of the API's answer."""

    def __init__(self, raw, lacking: str):
        super().__init__(f"{status(raw)} with JSON that is not the API's answer ({lacking})")


_MISSING = object()


def text_of(raw, holder, name: str, lacking: str) -> str:
    """The text field `name` of a part of an answer (`holder`: a choice, a message, a content block); null is an
    empty text (a refusal, a tool call), a missing holder or a field that is not text is not the API's answer."""
    value = getattr(holder, name, _MISSING)
    if value is _MISSING or not isinstance(value, (str, type(None))):
        raise NotTheAnswer(raw, lacking)
    return value or ""


def status(raw) -> str:
    return f"HTTP {raw.status_code}"


def media_type(raw) -> str:
    """The response's media type, if it reads as one (the message must stay one short, plain line)."""
    value = raw.headers.get("content-type", "").split(";")[0].strip()
    return value if re.fullmatch(r"[\w.+-]{1,40}/[\w.+-]{1,60}", value) else "none or unreadable"


def public_url(url: str) -> str:
    """A server's address for a message: scheme, host, port and path, without a user, password or query
    (where a key could hide)."""
    parts = urlsplit(str(url))
    return urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path.rstrip("/"), "", ""))
