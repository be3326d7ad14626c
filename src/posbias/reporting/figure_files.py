"""Figures to files, for every stage: matplotlib's headless backend, and `save_figure`, which writes a figure
as PNG and PDF with fixed metadata, so that the same figure gives the same bytes on every run."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")  # headless: jobs run without a display

import matplotlib.pyplot as plt  # noqa: E402

from posbias.io import atomic_write  # noqa: E402

# What each format records beyond the drawing: the PDF's creation date would change on every run.
METADATA = {"png": None, "pdf": {"CreationDate": None}}
DPI = 150


def save_figure(fig, outputs: list[str]) -> None:
    """Write the figure to each path in the format its extension names (png, pdf), then close it."""
    fig.tight_layout()
    for path in outputs:
        fmt = path.rsplit(".", 1)[-1]
        with atomic_write(path, "wb") as handle:
            fig.savefig(handle, format=fmt, dpi=DPI, metadata=METADATA[fmt])
    plt.close(fig)
