"""`posbias.training.prefetch`: results in order, an error raised in the caller with the thread's traceback, and the
thread stopped however the caller leaves (the loop's batches and weights with and without it: tests/training/
test_loop.py)."""

import contextlib
import threading
import time
import traceback

import pytest

from posbias.training.prefetch import prepared_ahead


def prefetch_threads() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name == "posbias-prefetch"]


def slowly_squared(item: int) -> int:
    time.sleep(0.01 * (item % 3))  # uneven work: order must not depend on it
    return item * item


@pytest.mark.parametrize("depth", [0, 1, 2])
def test_results_come_in_order_and_the_thread_ends(depth):
    with prepared_ahead(slowly_squared, range(10), depth) as results:
        assert list(results) == [i * i for i in range(10)]
    assert prefetch_threads() == []


def test_the_thread_stays_at_most_depth_ahead():
    made = []
    with prepared_ahead(made.append, range(100), 2) as results:
        next(results)
        time.sleep(0.3)
        # one taken, two queued, and at most one more made that waits for room in the queue
        assert 1 <= len(made) <= 4
    assert prefetch_threads() == []


class BrokenStore(Exception):
    pass


def read_document(item: int) -> int:
    if item == 3:
        raise BrokenStore(f"document {item} is unreadable")
    return item


def test_an_error_in_the_thread_is_raised_in_the_caller_with_its_traceback():
    taken = []
    with pytest.raises(BrokenStore, match="document 3 is unreadable") as raised:
        with prepared_ahead(read_document, range(10), 2) as results:
            for item in results:
                taken.append(item)
    assert taken == [0, 1, 2]  # the items before it arrive first
    frames = "".join(traceback.format_exception(raised.value))
    assert "in read_document" in frames and "in _work" in frames  # where it happened, in the thread
    assert prefetch_threads() == []


@pytest.mark.parametrize("how", ["break", "error"])
def test_leaving_early_stops_the_thread(how):
    """A pre-emption (the loop raises `Preempted`) or any other way out of the block: the thread, blocked on a full
    queue, stops and is joined; nothing is made after that."""
    made = []

    def make(item):
        made.append(item)
        return item

    with pytest.raises(RuntimeError) if how == "error" else contextlib.nullcontext():
        with prepared_ahead(make, range(1000), 2) as results:
            for item in results:
                if item == 1:
                    if how == "error":
                        raise RuntimeError("pre-empted")
                    break
    assert prefetch_threads() == []
    count = len(made)
    time.sleep(0.2)
    assert len(made) == count < 10

