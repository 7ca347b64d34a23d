"""An object the arguments reach twice, written through one path, and id()
of traced values: refused, since the copies the trace works on, and each
call's own arrays, cannot answer as the caller's objects would (a second
hostile review of issue 25)."""

import helpers_row_lists as h
import numpy as np
import pytest

import yota_src as ys
from yota_src.errors import MutationError, UnsupportedSyntaxError


def test_a_write_into_a_list_passed_twice_is_refused():
    a = [np.array([1.0, 2.0]), np.array([3.0, 4.0])]
    with pytest.raises(MutationError, match="twice"):
        ys.grad(h.written_through_one_read_through_other, a, a)
    b = [x.copy() for x in a]  # two lists: the write is replayed, the read is the other's
    value, _ = ys.grad(h.written_through_one_read_through_other, a, b)
    assert value == 5.0 and np.array_equal(a[0], [2.0, 4.0])


def test_ids_of_traced_values_are_refused():
    x = np.ones(2)
    with pytest.raises(UnsupportedSyntaxError, match="id()"):
        ys.grad(h.ids_compared, x, x)
