import itertools

import numpy as np
import pytest

from posbias.stats.chance import expected_random


def test_expected_random_is_the_mean_over_every_order():
    for n in (1, 3, 5):
        orders = list(itertools.permutations(range(n)))
        mrr = np.mean([1 / (order.index(0) + 1) for order in orders])
        rank = np.mean([order.index(0) + 1 for order in orders])
        assert expected_random({"q": n}) == pytest.approx((mrr, rank))
    assert expected_random({"a": 1, "b": 2}) == pytest.approx(((1 + 0.75) / 2, (1 + 1.5) / 2))
