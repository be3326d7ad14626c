"""Per-job logging: everything a job says (log records, progress bars, warnings) goes to its log file."""

from __future__ import annotations

import contextlib
import logging
import os
import resource
import sys
import time
from pathlib import Path

from posbias.errors import InfrastructureError, InputError, Stopped, exit_status, one_line


@contextlib.contextmanager
def job_log(path: str | None):
    """Send logging and stderr (where tqdm draws) to `path`; to the terminal when None. With a `path` (a workflow
    job), the tokenizers' threads follow OMP_NUM_THREADS, the job's CPU seconds are logged at its end, and input to
    fix or an infrastructure fault ends the job with one line in its log and the command line's exit status."""
    if path is None:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
        yield
        return
    # A Snakemake job's thread budget: Snakemake sets OMP_NUM_THREADS (and MKL's, OpenBLAS's) to the rule's
    # `threads`; the Hugging Face tokenizers' Rust pool reads its own variable, and would start a thread a core.
    if os.environ.get("OMP_NUM_THREADS"):
        os.environ.setdefault("RAYON_NUM_THREADS", os.environ["OMP_NUM_THREADS"])
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle, contextlib.redirect_stderr(handle):
        root = logging.getLogger()
        handler = logging.StreamHandler(handle)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
        level = root.level  # restored at the end: a job run in-process (a test, a notebook) leaves logging as it was
        root.setLevel(logging.INFO)
        started = time.monotonic()
        try:
            yield
        except (InputError, InfrastructureError) as err:
            # input to fix or a fault to mend: one line, no traceback, and the command line's exit status
            logging.getLogger("posbias").error("job %s: %s", "stopped" if isinstance(err, Stopped) else "failed",
                                               one_line(str(err)))
            raise SystemExit(exit_status(err)) from None
        except BaseException:
            logging.getLogger("posbias").exception("job failed")
            raise
        finally:
            logging.getLogger("posbias.logs").info("%s", job_usage(time.monotonic() - started))
            root.removeHandler(handler)
            root.setLevel(level)
            sys.stderr.flush()


def job_usage(inside: float) -> str:
    """The job process's resources up to the end of its work (not the interpreter's exit, about 0.5-1 CPU s more
    for a torch job): its seconds since it started (`inside`, the seconds in `job_log`, where /proc is missing),
    CPU seconds and threads. Snakemake's `benchmark:` files sample CPU every 0.5 s for 15 s, then every 30 s, so a
    job of 16 to 45 s shows its CPU at 15 s. benchmarks/demo_job_seconds.py reads it."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
    try:
        with open("/proc/self/stat", encoding="ascii") as stat, open("/proc/uptime", encoding="ascii") as uptime:
            started = int(stat.read().rsplit(")", 1)[1].split()[19]) / os.sysconf("SC_CLK_TCK")
            seconds = float(uptime.read().split()[0]) - started
        threads = str(len(os.listdir("/proc/self/task")))
    except (OSError, ValueError, IndexError):  # not Linux
        seconds, threads = inside, "?"
    return (f"job usage: {seconds:.1f} s, {cpu:.1f} CPU s (user {own.ru_utime + children.ru_utime:.1f}), "
            f"peak RSS {own.ru_maxrss / 1024:.0f} MB, {threads} threads at the end")
