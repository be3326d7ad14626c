import pytest

from posbias.reporting.percentages import whole_percentages


@pytest.mark.parametrize("counts, shares", [
    ([1, 1, 1], [34, 33, 33]),  # 33.3 each: rounding alone gives 99; the first of equal remainders gets the point
    ([1, 1, 1, 3], [17, 17, 16, 50]),  # 16.7 three times: rounding alone gives 101
    ([0, 1, 1, 4], [0, 17, 17, 66]),
    ([2, 1, 7], [20, 10, 70]),  # exact shares stay as they are
    ([5, 0, 0, 0], [100, 0, 0, 0]),
    ([1, 199], [1, 99]),  # 0.5 and 99.5: equal remainders, so the point goes to the first
])
def test_largest_remainder_shares_sum_to_one_hundred(counts, shares):
    assert whole_percentages(counts) == shares


def test_the_largest_remainder_gets_the_point_first():
    # 12.5, 37.4 and 50.1 percent of 1000: floors 12, 37, 50; remainders .5, .4, .1 -> the point goes to the first
    assert whole_percentages([125, 374, 501]) == [13, 37, 50]
    assert whole_percentages([374, 125, 501]) == [37, 13, 50]  # by remainder, not by position


@pytest.mark.parametrize("counts", [[0, 0], [], [3, -1]])
def test_no_share_without_a_positive_total(counts):
    with pytest.raises(ValueError, match="non-negative with a positive total"):
        whole_percentages(counts)
