"""Primitives registered as "no gradient" must not lie (issue 7, class 4).

The audit of templates/nondiff.py, argument by argument. A float argument
through which the value changes continuously has a template (checked here
against finite differences) or is refused with NoDiffRuleError when a
gradient is needed through it; only piecewise-constant arguments pass none.

Piecewise constant in every argument (`nondifferentiable`):

- boolean results: comparisons and logic, isfinite, isnan, isinf, isneginf,
  isposinf, signbit, iscomplex, isreal, isclose, allclose, array_equal, all, any;
- constant between jumps: floordiv, floor_divide, sign, floor, ceil, round,
  rint, trunc, fix, spacing;
- integer results: argmax, argmin, nanargmax, nanargmin, argsort, nonzero,
  flatnonzero, argwhere, searchsorted, digitize, count_nonzero, shape, ndim,
  size, diag_indices, tril_indices, triu_indices, indices;
- read only shapes, integers and dtypes: zeros, ones, empty, eye, identity,
  tri, and zeros_like, ones_like, empty_like (only `a`'s shape is read).

Piecewise constant in some arguments (`nodiff`), a template for the others:

- full: `shape` | fill_value;  full_like: `a` | fill_value;
- arange: `stop` decides the length only (guarded) | start, step;
- heaviside: `x1` | x2, the value where x1 == 0;
- copysign (np and math): `x2`, only its sign is read | x1;
- nextafter: `x2`, the direction of one ulp | x1;
- bincount: `x`, `minlength` (length guarded) | weights;
- extract: `condition` (length guarded) | arr.

Templates for every float argument, refusing what is not exact:

- linspace, logspace, geomspace: start, stop, base (retstep=True refused);
- meshgrid: each input, its grid summed over the other axes;
- histogram: counts are piecewise constant in `a` and `bins`; weights, array
  bins and range (through the edges) have gradients; what depends on the
  data's extent or on density's bin widths is refused;
- unique: ar, where its entries are distinct; repeats, axis= and
  sorted=False are refused;
- linalg.norm(x, 0) counts the non-zeros: gradient 0.

Refused (`refused`): every random draw in its float parameters (loc, scale,
the array permuted or chosen from): a sample's derivative depends on how it
is drawn. Integer arguments (size, low, high) never carry a gradient.
"""

import inspect
import math

import numpy as np
import pytest

import yota_src as ys
from yota_src import rules
from yota_src.core import registry
from yota_src.errors import NoDiffRuleError


def weighted(fn):
    """sum(fn(*args) * w) for fixed weights, so every output element counts."""
    def loss(*args):
        out = fn(*args)
        w = np.linspace(0.5, 1.5, np.size(out)).reshape(np.shape(out))
        return np.sum(out * w)
    return loss


def uniform(shape, low=-1.0, high=1.0, seed=0):
    return np.random.default_rng(seed).uniform(low, high, shape)


# --- fills and ranges: the values they spread out have gradients -------------------

def full_of_a_float(v):
    return np.full((2, 3), v)


def full_of_a_row(v):
    return np.full((4, 3), v)


def full_like_of_a_float(v):
    return np.full_like(np.zeros((2, 2)), v)


@pytest.mark.parametrize("fn, value", [(full_of_a_float, 0.7), (full_of_a_row, uniform(3)),
                                       (full_like_of_a_float, 1.3)],
                         ids=lambda item: getattr(item, "__name__", ""))
def test_fill_values_have_gradients(fn, value):
    ys.check_grad(weighted(fn), value)


def full_like_of(a, v):
    return np.full_like(a, v)


def test_full_like_passes_no_gradient_to_the_template_array():
    _, g = ys.grad(weighted(full_like_of), uniform((2, 3)), 0.5)
    assert np.array_equal(g[0], np.zeros((2, 3)))
    assert np.isclose(g[1], np.sum(np.linspace(0.5, 1.5, 6)))


def linspace(a, b):
    return np.linspace(a, b, 5)


def linspace_without_endpoint(a, b):
    return np.linspace(a, b, 4, endpoint=False)


def linspace_of_arrays_along_the_last_axis(a, b):
    return np.linspace(a * np.ones(3), b * np.arange(1.0, 4.0), 4, axis=-1)


def linspace_of_one_sample(a, b):
    return np.linspace(a, b, 1)


def logspace(a, b):
    return np.logspace(a, b, 5)


def logspace_in_another_base(a, b):
    return np.logspace(a, b, 4, base=a + 2.0)


def geomspace(a, b):
    return np.geomspace(a + 1.0, b + 2.0, 5)


def geomspace_of_negatives(a, b):
    return np.geomspace(-a - 1.0, -b - 2.0, 3)


@pytest.mark.parametrize("fn", [
    linspace, linspace_without_endpoint, linspace_of_arrays_along_the_last_axis,
    linspace_of_one_sample, logspace, logspace_in_another_base, geomspace,
    geomspace_of_negatives], ids=lambda fn: fn.__name__)
def test_spaced_samples_have_gradients_in_their_ends(fn):
    ys.check_grad(weighted(fn), 0.3, 0.8)


def aranges(start, stop, step):
    return np.concatenate([np.arange(start, stop, step), np.arange(stop) * 1.0])


def test_arange_has_gradients_in_start_and_step_and_none_in_stop():
    ys.check_grad(weighted(aranges), 0.25, 2.15, 0.5)


@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("sparse", [False, True])
def test_meshgrid_inputs_have_gradients(indexing, sparse):
    def grid(a, b, c):
        grids = np.meshgrid(a, b, c, indexing=indexing, sparse=sparse)
        return grids[0] * grids[1] + grids[2] ** 2
    ys.check_grad(weighted(grid), uniform(2), uniform(3, seed=1), uniform(4, seed=2))


def second_grid(a, b):
    return np.meshgrid(a, b)[1]


def test_an_unused_meshgrid_output_passes_zeros():
    ys.check_grad(weighted(second_grid), uniform(2), uniform(3, seed=1))


# --- elementwise functions with one piecewise-constant argument ---------------------

def math_copysign(x):
    return math.copysign(x, -1.0) * 3.0


def test_copysign_has_a_gradient_in_its_magnitude():
    ys.check_grad(weighted(lambda x, s: np.copysign(x, s)), uniform((2, 3)), uniform(3, seed=1))
    ys.check_grad(math_copysign, 0.4)


def test_nextafter_has_a_gradient_in_its_start():
    ys.check_grad(weighted(lambda x, toward: np.nextafter(x, toward)), uniform(4), 2.0)


def test_heaviside_has_a_gradient_in_its_value_at_zero():
    x = np.array([-1.0, 0.0, 2.0, 0.0])
    ys.check_grad(weighted(lambda h: np.heaviside(x, h)), 0.3)
    _, g = ys.grad(weighted(lambda h: np.heaviside(x, h)), 0.3)
    assert np.isclose(g[0], np.sum(np.linspace(0.5, 1.5, 4)[[1, 3]]))


# --- binning, selecting and sorting -------------------------------------------------

BINS = np.array([0, 2, 2, 4, 1, 0])


def test_bincount_has_a_gradient_in_its_weights():
    ys.check_grad(weighted(lambda w: np.bincount(BINS, w, minlength=6)), uniform(6))


def test_histogram_has_a_gradient_in_its_weights():
    samples = np.array([0.1, 0.5, 0.5, 0.9, 1.0, -3.0, 7.0])
    ys.check_grad(weighted(lambda w: np.histogram(samples, 4, range=(0.0, 1.0), weights=w)[0]),
                  uniform(7))


def test_histogram_edges_have_gradients_in_bins_and_range():
    samples = np.array([0.1, 0.5, 0.9])
    ys.check_grad(weighted(lambda bins: np.histogram(samples, bins)[1]),
                  np.array([0.0, 0.3, 0.7, 1.0]))
    ys.check_grad(weighted(lambda lo, hi: np.histogram(samples, 3, range=(lo, hi))[1]),
                  -0.2, 1.4)


def test_extract_has_a_gradient_in_its_array():
    ys.check_grad(weighted(lambda x: np.extract(x > 0.0, x * 2.0)), uniform((3, 4)))


def test_unique_of_distinct_values_has_a_gradient():
    ys.check_grad(weighted(lambda x: np.unique(x)), uniform((2, 3)))
    ys.check_grad(weighted(lambda x: np.unique(x, return_counts=True)[0]), uniform(5))


def norm_of_order_zero(x):
    return np.linalg.norm(x, 0)


def test_norm_of_order_zero_counts_and_passes_a_zero_gradient():
    x = np.array([1.0, 0.0, -2.0])
    value, g = ys.grad(norm_of_order_zero, x)
    assert value == 2.0 and np.array_equal(g[0], np.zeros(3))


# --- what cannot be given exactly is refused, at the user's line --------------------

def unique_of_repeats(x):
    return np.sum(np.unique(np.concatenate([x, x[:1]])))


def histogram_over_the_data(x):
    counts, edges = np.histogram(x, 3)
    return np.sum(edges)


def histogram_density_weights(w):
    return np.sum(np.histogram(np.array([0.1, 0.6]), 2, range=(0, 1), density=True,
                               weights=w)[0])


def linspace_with_step(a):
    samples, step = np.linspace(0.0, a, 5, retstep=True)
    return np.sum(samples) + step


def gamma_of(shape):
    return np.sum(np.random.gamma(shape, 1.0, size=3))


def permuted(x):
    return np.sum(np.random.permutation(x) * np.arange(3))


def choice_of_values(x):
    return np.sum(np.random.choice(x, size=2))


@pytest.mark.parametrize("fn, arg, message", [
    (unique_of_repeats, np.array([1.1, 0.9, 2.2]), "repeated values"),
    (histogram_over_the_data, np.array([0.1, 0.5, 0.9]), "data's extent"),
    (histogram_density_weights, np.array([1.0, 2.0]), "density=True"),
    (linspace_with_step, 1.5, "retstep=True"),
    (gamma_of, 0.5, "no gradient through np.random.gamma"),
    (permuted, np.array([0.1, 0.2, 0.3]), "no gradient through np.random.permutation"),
    (choice_of_values, np.array([0.2, 0.3, 0.5]), "no gradient through np.random.choice"),
], ids=lambda item: getattr(item, "__name__", ""))
def test_gradients_that_cannot_be_given_exactly_are_refused(fn, arg, message):
    with pytest.raises(NoDiffRuleError, match=message) as error:
        ys.grad(fn, arg)
    assert "test_primitive_audit.py:" in str(error.value)


# --- the registry ---------------------------------------------------------------------

def test_no_gradient_declarations_agree_with_the_rules():
    """A primitive is non-differentiable as a whole or has a rule, never both;
    per-argument declarations name parameters of the primitive's rule (or of
    a function of the user's that is unrolled: tests/differentiate/test_user_rules.py)."""
    templates, nondifferentiable = rules.registered()
    assert not set(templates) & nondifferentiable
    declared, _ = rules.declarations()
    for fn, names in declared.items():
        template = rules.template_for(fn)
        if template is None:
            assert getattr(fn, "__module__", "").startswith("helpers_"), fn
            assert names <= set(inspect.signature(fn).parameters), fn
            continue
        assert names <= set(rules.parameter_names(template)[2:]), fn


@pytest.mark.parametrize("fn, message", [
    (lambda x: np.sum(np.abs(np.fft.fft(x))), "np.fft.fft gives a complex result"),
    (lambda x: np.sum((x * 1j).imag), "complex result"),
    (lambda x: np.sum(np.sqrt(x.astype(complex)).real), "complex result"),
])
def test_complex_values_on_the_gradient_path_are_refused(fn, message):
    with pytest.raises(NoDiffRuleError, match=message):
        ys.grad(fn, np.linspace(1.0, 2.0, 4))


def test_complex_arguments_are_refused_by_name():
    with pytest.raises(NoDiffRuleError, match="argument `z` is complex"):
        ys.grad(lambda z: np.sum(z.real), np.ones(3) + 1j)


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
@pytest.mark.parametrize("fn", [
    lambda x: np.sum(np.asmatrix(x) * x),
    lambda x: np.sum(np.matrix(x) ** 2),
])
def test_np_matrix_results_are_refused(fn):
    with pytest.raises(NoDiffRuleError, match="np.matrix"):
        ys.grad(fn, np.ones((2, 2)))


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
def test_np_matrix_arguments_are_refused_by_name():
    with pytest.raises(NoDiffRuleError, match="argument `m` is an np.matrix"):
        ys.grad(lambda m: np.sum(m * m), np.asmatrix(np.ones((2, 2))))


# NumPy parameters a rule does not take yet, each refused where passed ("the rule
# for np.max does not apply here: got an unexpected keyword argument 'initial'"),
# never ignored: a new NumPy parameter a rule misses fails this audit.
NOT_TAKEN = {
    "pinv": {"rcond", "hermitian", "rtol"},  # a cutoff changes which values count
    "max": {"initial"}, "amax": {"initial"}, "min": {"initial"}, "amin": {"initial"},
    "nanmax": {"initial"}, "nanmin": {"initial"},  # an initial value that wins
    "prod": {"initial"}, "nanprod": {"initial"},
    "var": {"mean"}, "std": {"mean"}, "nanvar": {"mean"}, "nanstd": {"mean"},  # a mean given
    "array": {"object", "ndmin", "ndmax"}, "take": {"mode"}, "sort": {"stable", "descending"},
    "float64": {"value"}, "float32": {"value"}, "float16": {"value"}, "longdouble": {"value"},
}
# parameters that change no gradient (where the result goes, its type, its layout)
_NEUTRAL = {"out", "dtype", "where", "casting", "order", "subok", "like", "device", "copy"}


def _numpy_rules():
    templates, _ = rules.registered()
    for fn, template in templates.items():
        if isinstance(fn, np.ufunc) or not (getattr(fn, "__module__", "") or "").startswith(
                "numpy"):
            continue
        try:
            yield fn, inspect.signature(fn), inspect.signature(template)
        except (TypeError, ValueError):  # a builtin without a signature
            continue


def test_every_numpy_parameter_is_taken_by_its_rule_or_listed():
    """Each rule's signature against the NumPy function's own: every parameter
    NumPy accepts (by position or keyword, NumPy 2's names too) is one the
    rule takes, or one listed above as not taken yet (a NumPy older than the
    newest may lack some of them)."""
    missing = {}
    for fn, numpy_signature, rule_signature in _numpy_rules():
        taken = set(list(rule_signature.parameters)[2:])
        if any(p.kind == p.VAR_KEYWORD for p in rule_signature.parameters.values()):
            continue
        names = {p.name for p in numpy_signature.parameters.values()
                 if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)} - _NEUTRAL - taken
        if names:
            missing[fn.__name__] = names
    assert {fn: names - NOT_TAKEN.get(fn, set()) for fn, names in missing.items()
            if names - NOT_TAKEN.get(fn, set())} == {}


def test_a_parameter_a_rule_does_not_take_is_refused_by_name():
    with pytest.raises(NoDiffRuleError, match="initial"):
        ys.grad(lambda x: np.max(x, initial=5.0), np.ones(3))


def test_every_positional_argument_reaches_the_rule_parameter_of_its_name():
    """NumPy's positional order against each rule's: an argument passed by
    position reaches the rule's parameter of the same name (np.sum's fourth is
    `out`, its rule's fourth `keepdims`), or the rule refuses it by name."""
    wrong = {}
    for fn, numpy_signature, rule_signature in _numpy_rules():
        if any(p.kind == p.VAR_POSITIONAL for p in numpy_signature.parameters.values()):
            continue  # (np.einsum(*operands): the rule takes them as they come)
        names = registry.parameter_names(fn) or []
        params = list(rule_signature.parameters)[2:]
        sentinels = tuple(object() for _ in names)
        args, kwargs = registry.as_rule_arguments(fn, params, sentinels, {})
        try:
            bound = rule_signature.replace(
                parameters=list(rule_signature.parameters.values())[2:]).bind(*args, **kwargs)
        except TypeError as error:  # refused by name: a parameter no rule takes
            assert any(f"'{name}'" in str(error) for name in
                       NOT_TAKEN.get(fn.__name__, set()) | _NEUTRAL | {"out"}), (fn, error)
            continue
        misplaced = {name: names[sentinels.index(value)] for name, value in
                     bound.arguments.items() if value in sentinels
                     and names[sentinels.index(value)] != name
                     and not (name == params[0] and value is sentinels[0])}  # (its subject)
        if misplaced:
            wrong[fn.__name__] = misplaced
    assert wrong == {}


@pytest.mark.parametrize("fn", [
    lambda x: np.sum(np.sum(x, 0, None, None, True) ** 2),
    lambda x: np.sum(np.mean(x, 1, None, None, True) * x),
    lambda x: np.sum(np.cumsum(x, 0, None, None) ** 2),
    lambda x: np.sum(np.var(x, 0, None, None, 0, True) * x),
    lambda x: np.sum(np.std(x, 1, None, None, 1, True) * x),
    lambda x: np.sum(np.max(x, 0, None, True) * x),
    lambda x: np.sum(np.prod(x, 1, None, None, True) * x),
    lambda x: np.sum(x.sum(0, None, None, True) * x),
    lambda x: np.sum(x.var(1, None, None, 1, True) * x),
    lambda x: np.sum(np.multiply(x, x, None) + np.exp(x, None)),
    lambda x: np.sum(np.add(x, x, out=None) * np.exp(x, out=None)),
    lambda x: np.sum(np.reshape(x, (-1,), "C") * np.arange(12.0)),
    lambda x: np.sum(np.reshape(x, (2, 6), "F") * np.arange(12.0).reshape(2, 6)),
    lambda x: np.sum(np.transpose(x, (1, 0)) ** 3),
], ids=["sum", "mean", "cumsum", "var", "std", "max", "prod", "x.sum", "x.var", "ufunc out",
        "out=None", "reshape C", "reshape F", "transpose"])
def test_arguments_passed_by_position_as_numpy_orders_them_give_exact_gradients(fn):
    ys.check_grad(fn, uniform((3, 4)) + 2.0)


def test_every_array_method_takes_its_arguments_in_its_functions_order():
    """`x.name(...)` is traced as `np.name(x, ...)`: the method's positional
    parameters must be the function's after its first, position by position."""
    from helpers_rule_checks import method_positional

    from yota_src.tracing.array_methods import ARRAY_METHODS

    differing = {}
    for name, fn in ARRAY_METHODS.items():
        found = method_positional(fn, name)  # (None: an older NumPy without signatures)
        if found is not None and found[0] != found[1]:
            differing[name] = found
    assert differing == {}


@pytest.mark.parametrize("fn, name", [
    (lambda x: np.sum(np.take(x, [2, 0], 1, None, "raise")), "mode"),
    (lambda x: np.sum(x.max(0, None, False, 0.0)), "initial"),
])
def test_an_argument_given_by_position_that_no_rule_takes_is_named_so(fn, name):
    with pytest.raises(NoDiffRuleError, match=f"NumPy's argument '{name}' \\(given by position"):
        ys.grad(fn, uniform((3, 4)))
