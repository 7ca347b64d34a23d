"""`ys.grad`'s quick way back to a compiled gradient (cache.py): a per-function
check that reads the arguments in place instead of computing the full key.
It must never answer with a gradient specialised to other arguments, never
hand out an array a later call changes, and keep every rule the full key
keeps (staleness, dynamic paths, wrt, bound arguments)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import yota_src as ys
from yota_src.api import gradients, numerical_gradient
from yota_src.api.cache import make_check
from yota_src.errors import ControlFlowChanged
from yota_src.ir.signature import signature_key

OPTIONS = (0, None, "roll")


class Plain:
    def __init__(self, **fields):
        self.__dict__.update(fields)


class Other(Plain):
    pass


class Slotted:
    __slots__ = ("a",)

    def __init__(self, a):
        self.a = a


class Guarded(Plain):
    @property
    def b(self):
        return 1.0


# Small domains, so that two drawn values often have the same structure and
# the interesting case (a check passing on other arguments) is common.
leaves = st.one_of(
    st.builds(np.ones, st.sampled_from([(), (2,), (1, 2), (2, 1)]),
              st.sampled_from([np.float64, np.float32, np.int64])),
    st.sampled_from([0.5, 1.5, 0, 1, 2, True, False, None, "a", "b"]),
    st.builds(np.float64, st.just(0.5)))
names = st.sampled_from(["a", "b"])
values = st.recursive(leaves, lambda inner: st.one_of(
    st.lists(inner, max_size=2), st.lists(inner, max_size=2).map(tuple),
    st.dictionaries(names, inner, max_size=2),
    st.builds(lambda cls, fields: cls(**fields), st.sampled_from([Plain, Other, Guarded]),
              st.dictionaries(names.map(lambda name: "w" + name), inner, max_size=2)),
    st.builds(Slotted, inner)), max_leaves=5)


def similar(value, data):
    """`value` with some of its leaves drawn again: same structure, often the
    same specialisation, sometimes not."""
    if type(value) in (list, tuple):
        return type(value)(similar(item, data) for item in value)
    if type(value) is dict:
        return {key: similar(item, data) for key, item in value.items()}
    if type(value) is Slotted:
        return Slotted(similar(value.a, data))
    if isinstance(value, Plain):
        return type(value)(**{key: similar(item, data) for key, item in vars(value).items()})
    if type(value) is np.ndarray:  # most often the same shape, another dtype
        return data.draw(st.builds(np.ones, st.sampled_from([value.shape, value.shape, (2,)]),
                                   st.sampled_from([np.float64, np.float32, np.int64])))
    return data.draw(st.one_of(st.just(value), leaves))


@settings(max_examples=300, deadline=None)
@given(st.lists(values, max_size=2), st.lists(values, max_size=2), st.data())
@pytest.mark.slow
def test_a_check_passes_exactly_on_arguments_of_the_same_specialisation(first, other, data):
    first = tuple(first)
    second = tuple(other) if data.draw(st.booleans()) else similar(first, data)
    check = make_check(OPTIONS, first)
    if check is None:  # where a check cannot be sure, none is made
        return
    assert check(OPTIONS, first)
    if check(OPTIONS, second):
        assert signature_key(first) == signature_key(second)
    elif signature_key(first) == signature_key(second):  # and it misses only what differs
        pytest.fail(f"a check refused arguments with the same specialisation: {second}")


def test_a_check_compares_the_call_options():
    x = np.ones(3)
    check = make_check(OPTIONS, (x,))
    assert check(OPTIONS, (x,)) and check((0, None, "roll"), (x,))
    assert not check((0, (0,), "roll"), (x,)) and not check((1, None, "roll"), (x,))
    assert not check(OPTIONS, (x, x)) and not check(OPTIONS, ())


def test_objects_whose_fields_are_not_their_dict_get_no_check():
    assert make_check(OPTIONS, (Slotted(np.ones(2)),)) is None
    assert make_check(OPTIONS, (Guarded(wa=np.ones(2)),)) is None
    assert make_check(OPTIONS, (np.float64(1.0),)) is None
    looped = []
    looped.append(looped)
    assert make_check(OPTIONS, (looped,)) is None


def square_sum(x):
    return np.sum(x * x)


def test_gradients_handed_out_are_never_changed_by_a_later_call():
    first_value, first = ys.grad(square_sum, np.array([1.0, 2.0]))
    kept = first[0].copy()
    for step in range(3):
        _, later = ys.grad(square_sum, np.array([3.0, 4.0 + step]))
        assert later[0] is not first[0]
    assert np.array_equal(first[0], kept) and first_value == 5.0


def test_alternating_shapes_and_dtypes_each_get_their_own_gradient():
    for x in [np.ones(3), np.ones(4), np.ones(3, np.float32), np.ones(3), np.ones((2, 2))]:
        value, g = ys.grad(square_sum, x * 2)
        assert g[0].shape == x.shape and g[0].dtype == x.dtype
        assert np.allclose(g[0], 4 * x) and np.isclose(value, 4 * x.size)


def power_sum(x, n):
    total = 0.0
    for _ in range(n):
        total = total + np.sum(x)
    return total * x[0]


@pytest.mark.parametrize("n", [2, 3, 2, True])
def test_a_static_argument_is_part_of_the_check(n):
    x = np.array([0.5, 1.5])
    ys.grad(power_sum, x, 2)
    value, g = ys.grad(power_sum, x, n)
    assert np.isclose(value, power_sum(x, n))
    assert np.allclose(g[0], numerical_gradient(power_sum, (x, n), 0))


def scaled(x):
    return np.sum(x) * SCALE


SCALE = 2.0


def test_a_global_rebound_after_a_hit_retraces():
    global SCALE
    x = np.ones(2)
    ys.grad(scaled, x)
    assert np.allclose(ys.grad(scaled, x)[1][0], 2.0)
    try:
        SCALE = 5.0
        assert np.allclose(ys.grad(scaled, x)[1][0], 5.0)
        assert np.allclose(ys.grad(scaled, x)[1][0], 5.0)
    finally:
        SCALE = 2.0
    assert np.allclose(ys.grad(scaled, x)[1][0], 2.0)


def model(params, x):
    return np.sum(np.tanh(params.W @ x + params.b))


def test_struct_arguments_that_change_shape_or_fields_are_not_confused():
    x = np.array([0.5, -1.0, 2.0])
    small = Plain(W=np.ones((2, 3)) * 0.1, b=np.zeros(2))
    for params in [small, Plain(W=np.ones((4, 3)) * 0.2, b=np.ones(4)), small,
                   Plain(b=np.zeros(2), W=np.ones((2, 3)) * 0.3), Other(W=small.W, b=small.b)]:
        value, g = ys.grad(model, params, x)
        reference = ys.simplegrad(model, params, x)(params, x)
        assert np.isclose(value, reference[0])
        assert list(g[0]) == list(reference[1])
        for path in g[0]:
            assert np.allclose(g[0][path], reference[1][path])
        assert np.allclose(g[1], reference[2])


def affine(W, x, b):
    return np.sum(W @ x + b)


@pytest.mark.parametrize("wrt", [None, 0, [0], (0,), [0, 2], (2, 0), [1]])
def test_wrt_chooses_the_gradients_on_every_call(wrt):
    W, x, b = np.ones((2, 3)), np.array([1.0, 2.0, 3.0]), np.zeros(2)
    ys.grad(affine, W, x, b)
    for _ in range(2):
        _, g = ys.grad(affine, W, x, b, wrt=wrt)
        chosen = {0, 1, 2} if wrt is None else {wrt} if isinstance(wrt, int) else set(wrt)
        assert [index for index in range(3) if g[index] is not None] == sorted(chosen)


def signed(x):
    if x[0] > 0:
        return np.sum(x * x)
    return np.sum(-x)


def test_dynamic_paths_are_each_right_and_a_static_call_refuses_another_path():
    up, down = np.array([1.0, 2.0]), np.array([-1.0, 2.0])
    for x in [up, down, up, down]:
        value, g = ys.grad(signed, x, dynamic=True)
        assert np.isclose(value, signed(x))
        assert np.allclose(g[0], numerical_gradient(signed, (x,), 0))
    gradients._cache.clear()
    ys.grad(signed, up)
    ys.grad(signed, up)
    with pytest.raises(ControlFlowChanged, match="dynamic=True"):
        ys.grad(signed, down)


class Layer:
    def __init__(self, W):
        self.W = W

    def loss(self, x):
        return np.sum(np.tanh(self.W @ x))


def test_bound_methods_answer_for_the_arguments_given():
    layer, x = Layer(np.ones((2, 3)) * 0.5), np.array([0.1, 0.2, 0.3])
    for _ in range(3):
        value, g = ys.grad(layer.loss, x)
        assert len(g) == 1 and np.isclose(value, layer.loss(x))
        assert np.allclose(g[0], numerical_gradient(lambda v: layer.loss(v), (x,), 0))


def regression(W, b, x, y):
    return np.mean((np.tanh(x @ W + b) - y) ** 2)


def test_other_batch_sizes_reuse_a_module_that_reads_sizes(monkeypatch):
    """The first batch size gets code made for it; the second gets code that
    reads sizes at run time, which every later size uses without a trace."""
    from yota_src.api import gradients
    built = []
    original = gradients._build_once
    monkeypatch.setattr(gradients, "_build_once",
                        lambda *a, **k: built.append(k.get("sizes")) or original(*a, **k))
    rng = np.random.default_rng(0)
    W, b = rng.normal(size=(4, 3)), rng.normal(size=3)
    for n in (32, 32, 17, 32, 5, 100, 17, 1):
        x, y = rng.normal(size=(n, 4)), rng.normal(size=(n, 3))
        value, g = ys.grad(regression, W, b, x, y)
        reference = ys.simplegrad(regression, W, b, x, y)(W, b, x, y)
        assert np.isclose(value, reference[0])
        for got, expected in zip(g, reference[1:]):
            np.testing.assert_allclose(got, expected, rtol=1e-12)
    assert built == [False, True]
    ys.grad(regression, W, b, np.ones((3, 4), np.float32), np.ones((3, 3)))  # a new dtype
    assert built == [False, True, False]


# --- found by a hostile tester (the inline cache hit and what it checks) ---------------

def test_a_retrace_that_fails_leaves_the_next_call_served():
    """A stale variant is dropped before the trace that would replace it; that
    trace failing (a global deleted) must not leave the quick path broken."""
    x, module = np.ones(2), globals()
    assert ys.grad(scaled, x)[0] == 4.0
    del module["SCALE"]
    try:
        with pytest.raises(NameError):
            ys.grad(scaled, x)
    finally:
        module["SCALE"] = 5.0
    try:
        assert ys.grad(scaled, x)[0] == 10.0 and ys.grad(scaled, x)[0] == 10.0
    finally:
        module["SCALE"] = 2.0


def signed_zero(x):
    return np.sum(x * math.atan2(ZERO, -1.0))


ZERO = 0.0


def test_a_global_rebound_from_zero_to_minus_zero_retraces():
    global ZERO
    x = np.ones(3)
    assert ys.grad(signed_zero, x)[0] > 0
    df = ys.simplegrad(signed_zero, x)
    try:
        ZERO = -0.0
        assert ys.grad(signed_zero, x)[0] == signed_zero(x) < 0
        with pytest.raises(ys.errors.SignatureMismatch, match="ZERO"):
            df(x)
    finally:
        ZERO = 0.0


def keyword_scaled(x, *, s=2.0):
    return np.sum(s * x)


def test_keyword_defaults_changed_in_place_retrace():
    x = np.ones(3)
    assert ys.grad(keyword_scaled, x)[0] == 6.0
    try:
        keyword_scaled.__kwdefaults__["s"] = 4.0
        assert ys.grad(keyword_scaled, x)[0] == 12.0
        assert ys.simplegrad(keyword_scaled, x)(x)[0] == 12.0
    finally:
        keyword_scaled.__kwdefaults__["s"] = 2.0


class Scaled:
    scale = 2.0

    def act(self, x):
        return x * 2.0

    def loss(self, x):
        return np.sum(self.scale * self.act(x))


def test_an_attribute_given_later_to_a_subclass_shadows_its_base_s():
    class Child(Scaled):
        pass

    child, x = Child(), np.ones(3)
    assert ys.grad(Child.loss, child, x)[0] == 12.0
    df = ys.simplegrad(Child.loss, child, x)
    Child.scale = 3.0
    assert ys.grad(Child.loss, child, x)[0] == child.loss(x) == 18.0
    with pytest.raises(ys.errors.SignatureMismatch, match="scale of class"):
        df(child, x)
    Child.act = lambda self, x: x * 5.0
    assert ys.grad(Child.loss, child, x)[0] == child.loss(x) == 45.0
