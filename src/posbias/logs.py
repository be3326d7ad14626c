"""Per-job logging: everything a job says (log records, progress bars, warnings) goes to its log file."""

from __future__ import annotations

import contextlib
import logging
import sys
from pathlib import Path


@contextlib.contextmanager
def job_log(path: str | None):
    """Send logging and stderr (where tqdm draws) to `path`; to the terminal when None."""
    if path is None:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
        yield
        return
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle, contextlib.redirect_stderr(handle):
        root = logging.getLogger()
        handler = logging.StreamHandler(handle)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
        root.setLevel(logging.INFO)
        try:
            yield
        except BaseException:
            logging.getLogger("posbias").exception("job failed")
            raise
        finally:
            root.removeHandler(handler)
            sys.stderr.flush()
