"""posbias.reporting.figure_files: every figure as PNG and PDF, the same bytes for the same drawing."""

import time

from posbias.reporting.figure_files import plt, save_figure


def _draw(paths: list[str]) -> None:
    fig, ax = plt.subplots(figsize=(2, 2))
    ax.plot([0, 1, 2], [1, 0, 2])
    ax.set_title("a figure")
    save_figure(fig, paths)


def test_a_figure_is_written_in_each_format_byte_stable(tmp_path):
    first = [str(tmp_path / "a.png"), str(tmp_path / "a.pdf")]
    second = [str(tmp_path / "b.png"), str(tmp_path / "b.pdf")]
    _draw(first)
    time.sleep(1.1)  # a creation date in seconds would differ now
    _draw(second)
    for a, b in zip(first, second):
        assert open(a, "rb").read() == open(b, "rb").read(), a
    assert open(first[0], "rb").read(8) == b"\x89PNG\r\n\x1a\n" and open(first[1], "rb").read(5) == b"%PDF-"
    assert plt.get_fignums() == []  # closed
