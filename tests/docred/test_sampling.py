"""The study's row selection against the pandas calls it stands for."""

from __future__ import annotations

import pandas as pd
import pytest

from posbias.errors import InputError
from posbias.docred.sampling import first_per_group, last_per_group, sample, shuffle

ROWS = [("t3", 0), ("t1", 1), ("t3", 2), ("t2", 3), ("t3", 4), ("t1", 5), ("t4", 6), ("t2", 7)]
FRAME = pd.DataFrame(ROWS, columns=["title", "row"])


def rows_of(frame: pd.DataFrame) -> list[tuple]:
    return [tuple(values) for values in frame.itertuples(index=False)]


@pytest.mark.parametrize("n,seed", [(1, 0), (5, 0), (5, 1), (8, 7)])
def test_sample_draws_what_dataframe_sample_draws(n, seed):
    assert sample(ROWS, n, seed) == rows_of(FRAME.sample(n, random_state=seed))


def test_shuffle_is_a_sample_of_every_row():
    assert shuffle(ROWS, 0) == rows_of(FRAME.sample(frac=1, random_state=0))
    assert sorted(shuffle(ROWS, 0)) == sorted(ROWS)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_last_per_group_is_groupby_tail(k):
    assert last_per_group(ROWS, lambda row: row[0], k) == rows_of(FRAME.groupby("title").tail(k))


def test_first_per_group_is_drop_duplicates():
    assert first_per_group(ROWS, lambda row: row[0]) == rows_of(FRAME.drop_duplicates("title"))


def test_asking_for_more_pairs_than_candidates_names_the_key():
    with pytest.raises(InputError, match=r"probes\.n: 9 pairs asked for, but only 8 candidates"):
        sample(ROWS, 9, 0)
