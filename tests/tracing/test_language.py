"""Each language construct the unroller handles, checked with finite differences."""

import dataclasses
import functools

import numpy as np
import pytest
from helpers_language import (
    Model,
    asserts,
    augmented,
    branches,
    builds_model,
    call_variadic,
    call_with_keywords,
    closure,
    conditional_expression,
    containers,
    control,
    data_while,
    decorated,
    integer_static,
    layers_loss,
    local_mutation,
    loops,
    math_on_floats,
    methods_and_properties,
    model_loss,
    nondifferentiable_parts,
    operators,
    partial_call,
    python_extremes,
    recursion,
    reversed_and_isinstance,
    tuple_unpacking,
    two_layers,
    while_loop,
)

import yota_src as ys


@pytest.fixture
def x(rng):
    return rng.uniform(0.2, 1.0, size=(4, 3))


def test_helpers_are_inlined(rng, x):
    ys.check_grad(two_layers, rng.standard_normal((5, 4)), rng.standard_normal((2, 5)), x)


def test_tuple_unpacking(x):
    ys.check_grad(tuple_unpacking, x)


def test_augmented_assignment_rebinds(x):
    before = x.copy()
    ys.check_grad(augmented, x)
    assert np.array_equal(x, before)


def test_operators(rng):
    ys.check_grad(operators, rng.standard_normal((3, 4)), rng.standard_normal((3, 4)))


def test_array_methods_and_static_properties(x):
    ys.check_grad(methods_and_properties, x)


def test_recursion_with_static_base_case(x):
    ys.check_grad(recursion, x)


def test_for_loops_over_range_zip_enumerate_and_rows(x):
    ys.check_grad(loops, x, 3)


def test_while_loop(x):
    ys.check_grad(while_loop, x)


@pytest.mark.parametrize("mode", ["square", "cube", "identity"])
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_static_and_data_dependent_branches(x, mode, sign):
    ys.check_grad(branches, sign * x, mode)


def test_break_continue_and_return_in_loops(rng):
    ys.check_grad(control, rng.standard_normal(10))


def test_list_tuple_dict_literals_and_comprehensions(rng):
    ys.check_grad(containers, rng.standard_normal(4))


@pytest.mark.parametrize("flag", [True, False])
def test_conditional_expressions(x, flag):
    ys.check_grad(conditional_expression, x, flag)
    ys.check_grad(conditional_expression, -x, flag)


def test_closures_and_lambdas(x):
    ys.check_grad(closure, x)


def test_default_and_keyword_arguments(x):
    ys.check_grad(call_with_keywords, x)


def test_varargs_and_kwargs(x):
    ys.check_grad(call_variadic, x)


def test_decorators_are_stripped(x):
    ys.check_grad(decorated, x)


def test_functools_partial(x):
    ys.check_grad(partial_call, x)


def test_nondifferentiable_primitives_are_recorded_without_gradient(rng):
    x = rng.uniform(0.1, 2.0, size=6)
    ys.check_grad(nondifferentiable_parts, x)
    df = ys.simplegrad(nondifferentiable_parts, x)
    assert "np.argmax(x)" in df.source and "np.floor(x * 3.0)" in df.source


def test_static_int_arguments_fold_and_are_guarded(x):
    ys.check_grad(integer_static, x, 2)
    _, g = ys.grad(integer_static, x, 2)
    assert g[1] is None


def test_methods_properties_and_self_as_struct(rng, x):
    model = Model(rng.standard_normal((5, 4)), rng.standard_normal((5, 1)))
    ys.check_grad(model_loss, model, x)
    _, g = ys.grad(model_loss, model, x)
    assert set(g[0]) == {("W",), ("b",)}


def test_bound_methods(rng, x):
    model = Model(rng.standard_normal((5, 4)), rng.standard_normal((5, 1)))
    value, g = ys.grad(model.loss, x)
    assert np.isclose(value, model.loss(x))
    assert len(g) == 1
    numeric = ys.api.numerical_gradient(model.loss, (x,), 0)
    assert np.allclose(g[0], numeric, rtol=1e-5, atol=1e-7)
    df = ys.simplegrad(model.loss, x)
    assert np.allclose(df(x)[1], g[0])


def test_objects_constructed_inside(rng, x):
    ys.check_grad(builds_model, rng.standard_normal((5, 4)), rng.standard_normal((5, 1)), x)


def test_local_containers_may_be_mutated(x):
    ys.check_grad(local_mutation, x)


OFFSET = np.array([0.5, 1.5, 2.5])


def global_array(x):
    return np.sum((x - OFFSET) ** 2)


def make_closure(W):
    def inner(x):
        return np.sum(np.tanh(W @ x))

    return inner


def test_global_arrays_are_named_constants_read_live():
    x = np.ones(3)
    ys.check_grad(global_array, x)
    df = ys.simplegrad(global_array, x)
    assert "OFFSET = np.array([0.5, 1.5, 2.5])" in df.source
    assert "x - OFFSET" in df.source
    OFFSET[0] = 10.0
    try:
        _, g = ys.grad(global_array, x)
        assert np.allclose(g[0], 2 * (x - OFFSET))
    finally:
        OFFSET[0] = 0.5


def test_closures_over_arrays(rng):
    inner = make_closure(rng.standard_normal((2, 3)))
    ys.check_grad(inner, rng.standard_normal(3))
    assert "W = np.array(" in ys.simplegrad(inner, np.ones(3)).source


def test_a_primitive_is_not_unrolled():
    with pytest.raises(ys.errors.SourceUnavailableError, match="is a primitive"):
        ys.grad(np.sum, np.ones(3))


def test_while_with_a_data_dependent_exit_is_guarded(x):
    ys.check_grad(data_while, x)
    df = ys.simplegrad(data_while, x)
    assert "raise ControlFlowChanged" in df.source
    with pytest.raises(ys.errors.ControlFlowChanged):
        df(x * 10.0)


def test_asserts_run_at_unroll_time_and_guard_data(x):
    ys.check_grad(asserts, x)
    df = ys.simplegrad(asserts, x)
    with pytest.raises(ys.errors.ControlFlowChanged, match=r"np.all\(x > 0\)"):
        df(-x)
    with pytest.raises(AssertionError, match="x must be positive"):
        ys.grad(asserts, -x, dynamic=True)


def test_math_functions_on_floats():
    ys.check_grad(math_on_floats, 0.7, 1.3)


def test_python_max_and_min_over_traced_values(rng):
    ys.check_grad(python_extremes, rng.standard_normal(3))
    df = ys.simplegrad(python_extremes, np.array([0.3, 0.2, 0.1]))
    with pytest.raises(ys.errors.ControlFlowChanged):
        df(np.array([0.1, 0.9, 0.1]))


def test_list_arguments_guard_their_length(rng):
    layers = [rng.standard_normal((3, 3)), rng.standard_normal((2, 3))]
    ys.check_grad(layers_loss, layers, rng.standard_normal(3))
    df = ys.simplegrad(layers_loss, layers, np.ones(3))
    expected = "layers of type list with 2 items, got list of length 3"
    with pytest.raises(ys.errors.SignatureMismatch, match=expected):
        df(layers + [np.ones((2, 2))], np.ones(3))


def test_dict_arguments_guard_their_keys():
    def weighted(params):
        return np.sum(params["W"] * 2.0)

    df = ys.simplegrad(weighted, {"W": np.ones(2)})
    with pytest.raises(ys.errors.SignatureMismatch, match="keys"):
        df({"W": np.ones(2), "extra": np.ones(2)})


def test_reversed_enumerate_isinstance_len(rng):
    ys.check_grad(reversed_and_isinstance, rng.standard_normal(2), [0.5, rng.standard_normal(3)])


def test_closure_over_a_function(x):
    from helpers_language import make_with_activation

    ys.check_grad(make_with_activation(np.tanh), x)


def test_lambda_passed_to_a_helper(x):
    from helpers_language import lambda_to_helper

    ys.check_grad(lambda_to_helper, x)


def test_async_functions_are_refused():
    from helpers_language import asynchronous

    with pytest.raises(ys.errors.UnsupportedSyntaxError, match="async"):
        ys.grad(asynchronous, 1.0)


# --- generator expressions are lazy, as in Python ----------------------------------

def genexp_late_binding(x):
    k = 1.0
    scaled = (v * k for v in x)
    k = 10.0
    return sum(scaled)


def genexp_consumed_twice(x):
    squares = (v * v for v in x)
    first = sum(squares)
    return first + 100.0 * sum(squares)  # exhausted: the second sum is 0


def genexp_next(x):
    items = (v * 2.0 for v in x if v > 0)
    return next(items) * 10.0 + sum(items)


def genexp_interleaved_with_a_loop(x):
    state = [1.0]
    total = 0.0
    for v in (w * state[0] for w in x):
        state[0] = state[0] * 2.0
        total = total + v
    return total


def genexp_nested(x):
    return sum(a * b for a in x for b in (a, 2.0 * a) if b > -10.0)


@pytest.mark.parametrize("fn", [genexp_late_binding, genexp_consumed_twice, genexp_next,
                                genexp_interleaved_with_a_loop, genexp_nested])
def test_generator_expressions_are_lazy(fn):
    x = np.array([0.5, -1.5, 2.0])
    assert ys.grad(fn, x)[0] == pytest.approx(fn(x))
    ys.check_grad(fn, x)


class Base:
    def __init__(self, k):
        self.k = k

    def forward(self, x):
        return np.sum(x) * self.k


class Child(Base):
    def __init__(self, k):
        super().__init__(k * 2.0)

    def forward(self, x):
        return super().forward(x) + np.sum(x ** 2)


def with_super(model, x):
    return model.forward(x) + Child(3.0).forward(x)


class AttrDict(dict):
    __getattr__ = dict.__getitem__


def reads_attribute_dict(x, config):
    return np.sum(x) * config.lr


def cast_to(x, dtype):
    return np.sum(x.astype(dtype) ** 2)


@pytest.mark.parametrize("fn, make", [
    (with_super, lambda x: (Child(2.0), x)),
    (reads_attribute_dict, lambda x: (x, AttrDict(lr=2.0))),
    (cast_to, lambda x: (x, np.longdouble)),
], ids=["super()", "dict with __getattr__", "a dtype class as argument"])
def test_object_patterns(fn, make):
    args = make(np.array([0.5, -1.5, 2.0]))
    assert ys.grad(fn, *args)[0] == pytest.approx(fn(*args))
    ys.check_grad(fn, *args)


def test_an_argument_that_contains_itself_is_refused():
    looped = [1.0]
    looped.append(looped)
    with pytest.raises(ValueError, match="contains itself"):
        ys.grad(lambda x, items: np.sum(x), np.ones(2), looped)


class Layer:
    """A small wrapper with its own operators, as model code writes them."""

    def __init__(self, W):
        self.W = W

    def __matmul__(self, v):
        return self.W @ v

    def __rmatmul__(self, v):
        return v @ self.W

    def __add__(self, other):
        return Layer(self.W + (other.W if isinstance(other, Layer) else other))

    def __rtruediv__(self, s):
        return Layer(s / self.W)


class Deferring(Layer):
    __array_ufunc__ = None  # NumPy's operators give way to this class's reflected ones


@pytest.mark.parametrize("f", [
    lambda W, x: np.sum(Layer(W) @ x),
    lambda W, x: np.sum(x @ Deferring(W)),
    lambda W, x: np.sum((Layer(W) + x[:, None]) @ x),
    lambda W, x: np.sum((2.0 / Layer(W)).W * x),
    lambda W, x: np.sum((np.sum(x) / Layer(W)).W * x),
], ids=["matmul", "reflected matmul", "add an array", "reflected division by a number",
        "reflected division by a traced number"])
def test_a_user_class_s_operators_with_a_traced_operand_are_its_own(f):
    W, x = np.array([[1.5, 0.3], [-0.2, 2.0]]), np.array([0.7, -1.1])
    assert ys.grad(f, W, x)[0] == pytest.approx(f(W, x))
    ys.check_grad(f, W, x)


class Poly:
    """Operators whose bodies decide from their operand's type and call
    NumPy: unrolled like any method, not run natively."""

    def __init__(self, c):
        self.c = c

    def __mul__(self, o):
        if isinstance(o, np.ndarray):
            return Poly(self.c * o)
        return Poly(self.c + o)

    def __iadd__(self, o):
        self.c = self.c + 2.0 * o  # not __add__: Python calls __iadd__ for +=
        return self

    def __add__(self, o):
        return Poly(self.c + o)

    def __radd__(self, o):
        return Poly(np.tanh(self.c) + o)

    def __gt__(self, o):
        return np.sum(self.c) > o

    def __neg__(self):
        return Poly(-np.sin(self.c))

    def __abs__(self):
        return Poly(np.abs(self.c) + 1.0)


def poly_operators(c, x):
    p = Poly(c) * x
    p += x
    q = 1 + Poly(c)
    r = -Poly(x)
    s = abs(Poly(c - x))
    bonus = 2.0 if 0.0 < Poly(c) else 3.0  # reflected: Poly.__gt__
    return np.sum(p.c ** 2) + np.sum(q.c * r.c) + np.sum(s.c) * bonus


def test_user_operators_are_unrolled_in_the_order_python_tries_them():
    c, x = np.array([0.5, 1.5]), np.array([2.0, -1.0])
    assert ys.grad(poly_operators, c, x)[0] == pytest.approx(poly_operators(c, x))
    ys.check_grad(poly_operators, c, x)
    with pytest.raises(ys.errors.ControlFlowChanged):  # the reflected test was guarded
        ys.grad(poly_operators, -c, x)


class Base:
    def __init__(self, v):
        self.v = v

    def __add__(self, o):
        return self.v + (o.v if isinstance(o, Base) else o)

    def __radd__(self, o):
        return 100.0 * self.v

    def __lt__(self, o):
        return self.v < o.v


class Sub(Base):
    def __radd__(self, o):  # a subclass's reflected method goes first
        return self.v * 10.0 + o.v

    def __gt__(self, o):  # and so does its reflected comparison
        return self.v < 0.0


class Same:
    def __init__(self, v):
        self.v = v

    def __add__(self, o):
        return NotImplemented  # same type on both sides: Python does not reflect


class Described:
    """Decides from its operand's type inside __eq__, __bool__, __float__."""

    def __init__(self, v):
        self.v = v

    def __eq__(self, o):
        if isinstance(o.v, float):
            return self.v == o.v
        return True

    def __bool__(self):
        return self.v > 1.0 if isinstance(self.v, float) else False

    def __float__(self):
        return self.v * 2.0 if isinstance(self.v, float) else 0.0


class Scaled(float):
    def __add__(self, o):
        return float(self) * 10.0 + o


@dataclasses.dataclass
class Pair:
    a: float
    b: float


def dispatch_order(x, y):
    total = Base(x) + Sub(y * 2.0)  # Sub.__radd__
    total = total + (3.0 if Base(x) < Sub(y) else 5.0)  # Sub.__gt__
    total = total + (2.0 if Described(x) != Described(y) else 7.0)  # default != from __eq__
    total = total + (x if Described(x) else y) + float(Described(y))
    total = total + Scaled(2.0) + x  # the float subclass's own __add__
    return total * (1.5 if Pair(x, y) == Pair(x, y) else 0.5)  # dataclass __eq__, natively


def test_operator_methods_are_tried_in_python_s_order_and_see_traced_values():
    for x, y in ((1.5, 0.5), (0.7, -0.4)):
        assert ys.grad(dispatch_order, x, y, dynamic=True)[0] == pytest.approx(
            dispatch_order(x, y))
        ys.check_grad(dispatch_order, x, y)


def test_no_reflected_method_for_the_same_type_as_python():
    def f(x):
        return Same(x) + Same(2.0 * x)

    with pytest.raises(TypeError, match="unsupported operand"):
        ys.grad(f, 1.5)


class Counted:
    """A static object's operator may do what unrolled code refuses (a try
    block): it runs natively, as Python runs it."""

    def __init__(self, v):
        self.v = v

    def __eq__(self, o):
        try:
            return self.v == o.v
        except AttributeError:
            return False


def test_operators_of_objects_holding_no_traced_value_run_as_python_runs_them():
    def f(x):
        return x * (2.0 if Counted(1) == Counted(1) else 3.0)

    assert ys.grad(f, 1.5)[0] == 3.0


@functools.total_ordering
class Ranked:
    """Comparisons that decide from their operand's type, reached through
    total_ordering and through sorted/max/min: unrolled, not run natively."""

    def __init__(self, v):
        self.v = v

    def __eq__(self, o):
        return self.v == o.v

    def __lt__(self, o):
        if isinstance(self.v, float):
            return self.v < o.v
        return self.v > o.v


def ranked(x, y):
    low, high = sorted([Ranked(x), Ranked(y)])
    top = max(Ranked(x), Ranked(y * 2.0))
    bottom = min([Ranked(y), Ranked(x)])
    return (low.v * 2.0 + high.v + top.v * bottom.v) * (2.0 if Ranked(x) > Ranked(y) else 3.0)


def test_comparisons_reached_through_sorted_max_min_and_total_ordering_are_unrolled():
    for x, y in ((1.5, 0.5), (0.2, 0.9)):
        assert ys.grad(ranked, x, y, dynamic=True)[0] == pytest.approx(ranked(x, y))
        ys.check_grad(ranked, x, y)
