"""Dimensions as values (ir/dims.py): arithmetic makes polynomials over the
arguments' sizes, equality is structural, and what code decides from a size
is a fact: unified, pinned, or a decision checked at run time."""

import operator

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from yota_src.ir.dims import Dim, DimFacts, Symbol, decide_equal


@pytest.fixture
def facts():
    return DimFacts()


def test_sizes_below_two_are_not_symbols(facts):
    assert facts.symbol(0, (), 0, 1) == 1 and facts.symbol(0, (), 1, 0) == 0
    assert isinstance(facts.symbol(0, (), 2, 2), Dim)


@given(st.integers(2, 50), st.integers(2, 50), st.integers(-5, 5))
def test_arithmetic_keeps_the_example_value(n0, d0, c):
    facts = DimFacts()
    n, d = facts.symbol(0, (), 0, n0), facts.symbol(0, (), 1, d0)
    for made, expected in [(n * d + c, n0 * d0 + c), (3 * n - d, 3 * n0 - d0),
                           ((2 * n) // 2, n0), (n - n + c, c)]:
        assert (made.value if isinstance(made, Dim) else made) == expected


def test_equality_is_structural_and_decisions_are_facts(facts):
    n, m = facts.symbol(0, (), 0, 5), facts.symbol(1, (), 0, 5)
    assert n * 2 == n + n and (n * 2).key() == (n + n).key()
    assert (n == m) is False and not facts.decisions  # structure: no fact
    assert decide_equal(n, m) is True  # the user's code asked: they are unified
    assert n == m and facts.free() == [Symbol(0, (), 0)]
    assert (n > 4) is True and len(facts.decisions) == 1
    assert (n >= 0) is True and len(facts.decisions) == 1  # sizes are 0 or more: no fact
    assert (n >= 1) is True and len(facts.decisions) == 2  # an array may come empty


def test_a_size_hashed_or_compared_with_other_numbers_is_decided_on_its_value(facts):
    n = facts.symbol(0, (), 0, 6)
    assert len({n, 6}) == 1 and facts.pinned  # a set compares it as an int: pinned
    m = facts.symbol(1, (), 0, 4)
    assert abs(m - 10).value == 6 and len(facts.decisions) == 1  # `m - 10 >= 0` was False
    assert decide_equal(m, np.int64(4)) is True and facts.pinned.get(Symbol(1, (), 0)) == 4


def test_a_number_yota_src_cannot_follow_pins_the_size(facts):
    n = facts.symbol(0, (), 0, 7)
    assert [0, 1, 2, 3, 4, 5, 6, 7][n] == 7  # __index__
    assert facts.free() == [] and facts.canonical(n * 3) == 21


def test_shapes_compared_in_the_users_code_decide_each_size(facts):
    n, m = facts.symbol(0, (), 0, 3), facts.symbol(1, (), 0, 4)
    assert decide_equal((n, 2), (m, 2)) is False
    assert facts.decisions[0].op is operator.eq and facts.decisions[0].truth is False


def test_exact_division_stays_a_size_and_the_rest_pins(facts):
    n = facts.symbol(0, (), 0, 6)
    assert isinstance((4 * n) // 2, Dim)
    assert n // 4 == 1 and facts.free() == []
