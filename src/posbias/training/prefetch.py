"""The next optimizer steps' batches, prepared in a background thread while the device computes this step's.

Tokenising and collating a step's pairs (and, on CUDA, pinning the result) is host work that a GPU would otherwise
wait for between steps. One thread does it up to `depth` steps ahead into a bounded queue, and the steps come out in
the order asked for, built by the same function as without the thread: the same batches, so the same trained
weights, bit for bit (tests/training/test_prefetch.py). Preparing a batch draws no random numbers (a step's pairs
are drawn before), so the thread leaves every random state alone.

An exception in the thread is raised in the caller, with the thread's frames in its traceback. Leaving the `with`
block (the end of an epoch, a pre-emption's `Preempted`, an error) stops the thread and waits for it.
"""

from __future__ import annotations

import queue
import threading
from contextlib import contextmanager
from typing import Callable, Iterable, Iterator, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

POLL_SECONDS = 0.1  # how often a thread blocked on a full queue looks whether it was told to stop
_DONE, _FAILED, _READY = "done", "failed", "ready"


@contextmanager
def prepared_ahead(make: Callable[[Item], Result], items: Iterable[Item], depth: int) -> Iterator[Iterator[Result]]:
    """`make(item)` for each item, in order: prepared up to `depth` items ahead in a background thread, or (depth 0)
    in the caller when it asks for the next."""
    if depth == 0:
        yield map(make, items)
        return
    ahead = _Ahead(make, items, depth)
    try:
        yield ahead.results()
    finally:
        ahead.stop()


class _Ahead:
    """The thread behind `prepared_ahead` and its queue of (kind, value) entries."""

    def __init__(self, make: Callable, items: Iterable, depth: int):
        self._make, self._items = make, items
        self._queue: queue.Queue = queue.Queue(maxsize=depth)
        self._stopping = threading.Event()
        # a daemon: an interpreter that exits without `stop` (a fatal error elsewhere) does not wait for it
        self._thread = threading.Thread(target=self._work, name="posbias-prefetch", daemon=True)
        self._thread.start()

    def _work(self) -> None:
        try:
            for item in self._items:
                if not self._put(_READY, self._make(item)):
                    return
            self._put(_DONE, None)
        except BaseException as error:  # whatever it is, the caller raises it
            self._put(_FAILED, error)

    def _put(self, kind: str, value) -> bool:
        """Queue an entry, waiting while the queue is full; False once told to stop."""
        while not self._stopping.is_set():
            try:
                self._queue.put((kind, value), timeout=POLL_SECONDS)
                return True
            except queue.Full:
                continue
        return False

    def results(self) -> Iterator:
        while True:
            kind, value = self._queue.get()
            if kind == _DONE:
                return
            if kind == _FAILED:
                raise value  # its __traceback__ holds the thread's frames; this frame is added to them
            yield value

    def stop(self) -> None:
        self._stopping.set()
        self._thread.join()
