"""A list of arrays alike (one shape, one dtype) is one leaf, the rows of one
array, whose length the code reads at run time (issue 25): `for x in xs`
over a list rolls, and one module serves lists of every length. Whatever the
function does with the list, the gradient is right at the example, and at
another length right or refused, never silently wrong."""

import helpers_row_lists as h
import numpy as np
import pytest

import yota_src as ys
from yota_src.errors import ControlFlowChanged, MutationError, SignatureMismatch


def vectors(rng, count, width=4, scale=1.0):
    return [rng.normal(size=width) * scale for _ in range(count)]


def recurrent(rng, count):
    return rng.normal(size=(4, 4)) * 0.4, vectors(rng, count), rng.normal(size=4)


CASES = {  # name: (function, arguments at a length, serves every length)
    "loop": (h.loop, recurrent, True),
    "indexed": (h.indexed, recurrent, True),
    "enumerated": (h.enumerated, recurrent, True),
    "zipped": (h.zipped, lambda rng, n: (rng.normal(size=(4, 4)) * 0.4, vectors(rng, n),
                                          vectors(rng, n), rng.normal(size=4)), True),
    "collected": (h.collected, recurrent, False),
    "stacked": (h.stacked, lambda rng, n: (vectors(rng, n, 3), rng.normal(size=3)), True),
    "reduced": (h.reduced, lambda rng, n: (vectors(rng, n, 3), rng.normal(size=3)), True),
    "ends": (h.ends, lambda rng, n: (vectors(rng, n, 3), rng.normal(size=3)), True),
    "sliced": (h.sliced, recurrent, False),
    "builtin_sum": (h.builtin_sum, lambda rng, n: (vectors(rng, n, 3), rng.normal(size=3)),
                    False),
    "comprehension": (h.comprehension, lambda rng, n: (vectors(rng, n, 3), rng.normal(size=3)),
                      False),
    "joined": (h.joined, lambda rng, n: (vectors(rng, n, 3), vectors(rng, 2, 3),
                                         rng.normal(size=3)), False),
    "unpacked": (h.unpacked, lambda rng, n: (vectors(rng, n, 3), rng.normal(size=3)), False),
    "listed": (h.listed, lambda rng, n: (vectors(rng, n, 3), rng.normal(size=3)), False),
    "in_a_dict": (h.in_a_dict, lambda rng, n: (
        {"Ws": [rng.normal(size=(3, 3)) * 0.5 for _ in range(n)], "bs": vectors(rng, n, 3)},
        rng.normal(size=3)), True),
    "layers": (h.layers, lambda rng, n: ([rng.normal(size=(3, 3)) * 0.5 for _ in range(n)],
                                         vectors(rng, n, 3), rng.normal(size=3)), True),
    "typed": (h.typed, lambda rng, n: (vectors(rng, n, 3), rng.normal(size=3)), True),
    "times_array": (h.times_array, lambda rng, n: (vectors(rng, n, 3), rng.normal(size=3),
                                                   rng.normal(size=(2, 3))), True),
    "labels": (h.labels, lambda rng, n: (vectors(rng, n, 3), [rng.integers(0, 2, size=2)
                                                              for _ in range(n)],
                                         rng.normal(size=(2, 3))), True),
}


def numerical(f, args):
    """Each argument's gradient by central differences, a list's as a dict by index."""
    grads = []
    for index, arg in enumerate(args):
        if isinstance(arg, list) and arg[0].dtype.kind == "f":
            grads.append({(i,): ys.api.numerical_gradient(f, args, index, (("item", i),))
                          for i in range(len(arg))})
        elif isinstance(arg, dict):
            grads.append({(key, i): ys.api.numerical_gradient(f, args, index, (
                ("item", key), ("item", i))) for key in arg for i in range(len(arg[key]))})
        elif isinstance(arg, np.ndarray):
            grads.append(ys.api.numerical_gradient(f, args, index))
        else:
            grads.append(None)
    return grads


def assert_right(f, grads, args, atol=1e-7):
    for got, want in zip(grads, numerical(f, args)):
        if want is None:
            assert got is None
        elif isinstance(want, dict):
            assert sorted(got) == sorted(want)
            for key in want:
                np.testing.assert_allclose(got[key], want[key], rtol=1e-5, atol=atol)
        else:
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=atol)


@pytest.mark.parametrize("name", CASES)
def test_right_at_the_example_and_right_or_refused_at_other_lengths(name):
    f, make, general = CASES[name]
    rng = np.random.default_rng(5)
    df = ys.simplegrad(f, *make(rng, 6))
    for count in (6, 3, 9, 2):
        args = make(rng, count)
        try:
            value, *grads = df(*args)
        except (SignatureMismatch, ControlFlowChanged):
            assert count != 6 and not general, f"{name} refused a list of {count}"
            continue
        assert np.isclose(value, f(*args))
        assert_right(f, grads, args)


@pytest.mark.parametrize("name", [name for name in CASES if CASES[name][2]])
def test_the_lists_length_is_read_at_run_time(name):
    f, make, _ = CASES[name]
    source = ys.simplegrad(f, *make(np.random.default_rng(0), 6)).source
    assert "_stacked(" in source and " 6 " not in source.split('"""')[1]


def test_a_rolled_loop_over_a_long_list_is_small():
    rng = np.random.default_rng(1)
    df = ys.simplegrad(h.loop, *recurrent(rng, 300))
    assert df.source.count("\n") < 90
    assert "for t in range(M):" in df.source


@pytest.mark.parametrize("f", [h.appended, h.item_written, h.item_changed],
                         ids=lambda f: f.__name__)
def test_a_list_the_function_changes_keeps_its_arrays_apart(f):
    """A write into the list is a write into the argument: replayed or refused
    as for any list (never into a stacked copy)."""
    rng = np.random.default_rng(2)
    xs, w = vectors(rng, 4, 3), rng.normal(size=3)
    try:
        df = ys.simplegrad(f, [x.copy() for x in xs], w)
    except MutationError:
        return
    mine, theirs = [x.copy() for x in xs], [x.copy() for x in xs]
    value, *_ = df(mine, w)
    assert np.isclose(value, f(theirs, w))
    assert len(mine) == len(theirs) and all(np.array_equal(a, b) for a, b in zip(mine, theirs))


def test_grad_serves_other_lengths_from_one_trace():
    rng = np.random.default_rng(3)
    ys.clear_cache() if hasattr(ys, "clear_cache") else None
    for count in (5, 8, 5, 2):
        args = recurrent(rng, count)
        value, g = ys.grad(h.loop, *args)
        assert np.isclose(value, h.loop(*args))
        assert_right(h.loop, list(g), args)


def test_aux_returns_the_callers_list():
    rng = np.random.default_rng(4)
    xs, w = vectors(rng, 3, 3), rng.normal(size=3)
    (value, aux), g = ys.grad(h.aux, xs, w, has_aux=True)
    assert np.isclose(value, h.aux(xs, w)[0])
    assert isinstance(aux, list) and len(aux) == 3
    assert all(np.array_equal(a, b) for a, b in zip(aux, xs))


def test_a_list_unlike_the_example_is_refused_clearly():
    rng = np.random.default_rng(6)
    df = ys.simplegrad(h.loop, *recurrent(rng, 4))
    W, xs, h0 = recurrent(rng, 4)
    for bad in ([], [x.astype(np.float32) for x in xs], xs[:2] + [np.ones(5)], (xs[0], xs[1]),
                [x.reshape(2, 2) for x in xs], [x[:3] for x in xs]):
        with pytest.raises(SignatureMismatch, match="xs"):
            df(W, bad, h0)


def test_the_tape_plays_a_list():
    rng = np.random.default_rng(7)
    args = recurrent(rng, 5)
    value, g = ys.grad(h.loop, *args)
    assert np.isclose(g.tape.play(*args), value)
    assert np.isclose(g.tape.compile()(*args), value)


def square(rng, n):
    return rng.normal(size=(3, 3)) * 0.5, vectors(rng, n, 3)


@pytest.mark.parametrize("f", [h.length_by_shape, h.length_of_copy, h.length_of_joined,
                               h.length_by_counting, h.length_of_vstack, h.length_through_map,
                               h.last_by_identity, h.class_of],
                         ids=lambda f: f.__name__)
def test_the_length_or_an_item_read_as_python_reads_them(f):
    """Every way Python reads the number of items (or asks an item's
    identity, or the list's class) is the caller's list's answer: at another
    length the module is right or refuses, never takes the example's branch."""
    rng = np.random.default_rng(8)
    df = ys.simplegrad(f, *square(rng, 6))
    for count in (6, 2, 9):
        args = square(rng, count)
        try:
            value, *grads = df(*args)
        except (SignatureMismatch, ControlFlowChanged):
            assert count != 6
            continue
        assert np.isclose(value, f(*args))
        assert_right(f, grads, args)
        value, g = ys.grad(f, *args)
        assert np.isclose(value, f(*args))


def test_a_module_of_lists_alone_runs_saved(tmp_path):
    """The stacking helper needs nothing that another argument's checks
    would have defined; a saved module runs without yota-src."""
    df = ys.simplegrad(h.only_lists, [np.ones(3), np.arange(3.0)])
    df.save(tmp_path / "grad_only_lists.py")
    namespace: dict = {}
    exec((tmp_path / "grad_only_lists.py").read_text(), namespace)
    value, dxs = namespace["grad_only_lists"]([np.ones(3)] * 4)
    assert value == 12.0 and sorted(dxs) == [(i,) for i in range(4)]


def test_stacking_no_rows_refuses_as_numpy_does():
    rng = np.random.default_rng(9)
    df = ys.simplegrad(h.stack_of_a_slice, *square(rng, 6))
    with pytest.raises(ValueError):  # NumPy: need at least one array to stack
        h.stack_of_a_slice(*square(rng, 4))
    with pytest.raises(ControlFlowChanged):
        df(*square(rng, 4))
    args = square(rng, 7)
    assert np.isclose(df(*args)[0], h.stack_of_a_slice(*args))


def test_a_list_of_masks_keeps_its_masks_apart():
    """Masks select counts that differ from row to row: such a list is not stacked."""
    x = np.arange(4.0)
    ms = [np.array([True, False, True, True]), np.array([False, False, True, False])]
    value, g = ys.grad(h.masks, x, ms)
    assert value == h.masks(x, ms)
    np.testing.assert_allclose(g[0], ys.api.numerical_gradient(h.masks, (x, ms), 0), atol=1e-6)


def test_an_item_stored_into_an_argument_is_the_callers_array():
    rng = np.random.default_rng(10)
    Ws = [rng.normal(size=(3, 3)) for _ in range(3)]
    d, w = {"Ws": Ws}, rng.normal(size=3)
    df = ys.simplegrad(h.stores_an_item, d, w)
    d.pop("last", None)
    mine = {"Ws": list(Ws)}
    df(mine, w)
    assert mine["last"] is mine["Ws"][-1]


def test_the_same_array_twice_is_not_two_rows():
    """Its gradient is one per place in the list, as for two equal arrays."""
    a, w = np.ones(3), np.arange(3.0)
    df = ys.simplegrad(h.reduced, [a, a, np.zeros(3)], w)
    assert "_stacked" not in df.source
    _, dxs, _ = df([a, a, np.zeros(3)], w)
    want = ys.grad(h.reduced, [a, a.copy(), np.zeros(3)], w)[1][0]
    for key in want:
        np.testing.assert_allclose(dxs[key], want[key])
