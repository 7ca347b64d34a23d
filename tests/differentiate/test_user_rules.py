"""ys.diffrule (expression and template forms) and ys.nodiff."""

import helpers_rules as h
import numpy as np
import pytest

import yota_src as ys

ys.diffrule(h.logistic, "x", "y * (1 - y) * dy")
ys.nodiff(h.scaled_clip, "limit")
ys.diffrule(h.soft, "x", "dy / (1 + np.exp(-x))")


@ys.diffrule(h.conv)
def conv_rule(dy, y, A, W, **kw):
    dA = h.conv_grad_data(dy, W, **kw)  # noqa: F841 - templates assign d<param>


ys.nodiff(h.conv, "W")


ys.diffrule(h.soft_clip, "x", "dy * (1 - (y / limit) ** 2)")
ys.nodiff(h.soft_clip, "limit")
ys.diffrule(h.root, "t", "dy / (2 * y)")  # Python floats: divides by zero at t = 0.0
ys.diffrule(h.powsum, "x", "dy * p * x ** (p - 1)")
ys.diffrule(h.scaled_sin, "x", "dy * s * np.cos(s * x)")
ys.diffrule(h.leaky, "x", "dy * np.where(x > 0, 1.0, alpha)")
ys.diffrule(h.leaky, "alpha", "np.sum(dy * np.minimum(x, 0))")
ys.diffrule(h.soft_scalar, "x", "dy / (1 + np.exp(-x / t))")
ys.diffrule(h.soft_scalar, "t", "dy * (y / t - x / t / (1 + np.exp(-x / t)))")  # not summed


def test_expression_rule_matches_finite_differences(rng):
    ys.check_grad(h.logistic_loss, rng.standard_normal(5))


def test_expression_rule_reuses_the_result():
    source = ys.simplegrad(h.logistic_loss, np.ones(3)).source
    assert source.count("helpers_rules.logistic(") == 1
    assert "import helpers_rules" in source
    assert "np.exp" not in source


def test_rule_takes_precedence_over_inlining():
    _, tape = ys.trace(h.logistic_loss, np.ones(3))
    assert "logistic" in str(tape) and "np.exp" not in str(tape)


def test_template_rule_forwards_keywords(rng):
    A, W = rng.standard_normal(6), rng.standard_normal(3)
    df = ys.simplegrad(h.conv_loss, A, W)
    assert "helpers_rules.conv(A, W, pad=1)" in df.source
    assert "helpers_rules.conv_grad_data(" in df.source and "pad=1)" in df.source
    numeric = ys.api.numerical_gradient(h.conv_loss, (A, W), 0)
    assert np.allclose(df(A, W)[1], numeric, rtol=1e-5, atol=1e-7)


def test_nodiff_stops_the_gradient(rng):
    x = rng.standard_normal(4)
    _, g = ys.grad(h.soft_clip_loss, x, 2.0)
    assert g[1] is None or np.all(g[1] == 0)
    numeric = ys.api.numerical_gradient(h.soft_clip_loss, (x, 2.0), 0)
    assert np.allclose(g[0], numeric, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("f", [h.scaled_clip_twice, h.scaled_clip_loop])
def test_nodiff_on_an_unrolled_function_holds_in_every_call(f, rng):
    """A declaration on a function that is unrolled (not a primitive): its
    parameter takes no gradient in every call, nested, by keyword, in a loop."""
    x = rng.standard_normal(6) * 2
    df = ys.simplegrad(lambda x, limit: np.sum(f(x, limit)), x, 1.5) if f is not \
        h.scaled_clip_loop else ys.simplegrad(f, x, 1.5)
    _, dx, dlimit = df(x, 1.5)
    assert dlimit == 0.0
    held = ys.api.numerical_gradient(lambda x: np.sum(f(x, 1.5)), (x,), 0)
    np.testing.assert_allclose(dx, held, rtol=1e-5, atol=1e-7)


def test_declarations_hold_in_every_context():
    """The audit of issue 26: a rule, a nodiff, `wrt` and `has_aux` each hold
    where the declared function is called in the arms of a rolled `if`."""
    xs = np.array([1.2, -0.7, 2.1, -1.4, 0.3, -0.2, 1.7, -2.2, 0.9, -0.5])
    df = ys.simplegrad(h.in_branches, 0.8, xs, 1.0)
    assert "h.soft(" in df.source or "helpers_rules.soft(" in df.source  # the rule, called
    for data in (xs, -xs[::-1].copy()):
        _, dw, _, dcap = df(0.8, data, 1.0)
        held = ys.api.numerical_gradient(lambda w: h.in_branches(w, data, 1.0), (0.8,), 0)
        np.testing.assert_allclose(dw, held, rtol=1e-6)
        assert dcap == 0.0  # declared: no gradient
    (_, aux), (dw, _, dcap) = ys.grad(h.in_branches_with_aux, 0.8, xs, 1.0, has_aux=True)
    assert aux == {"steps": 10} and dcap == 0.0
    _, only = ys.grad(h.in_branches, 0.8, xs, 1.0, wrt="w")
    assert only[1] is None and only[2] is None and only[0] == dw


def test_a_template_rule_forwarding_keywords_holds_in_every_context(rng):
    """The `**kw` form (Yota's diffrule_kw) where its keyword comes by
    position, in a rolled loop and in both arms of a rolled `if`; W takes no
    gradient (declared), A an exact one."""
    A, Ws = rng.standard_normal(6), rng.standard_normal((8, 3))
    gate = np.array([1.0, -1.0, 2.0, -0.5, 0.3, -2.0, 1.5, -1.0])
    df = ys.simplegrad(h.conv_in_contexts, A, Ws, gate)
    assert "for t in range(" in df.source and "pad=1" in df.source
    for g in (gate, -gate[::-1].copy()):
        _, dA, dWs, _ = df(A, Ws, g)
        held = ys.api.numerical_gradient(lambda A: h.conv_in_contexts(A, Ws, g), (A,), 0)
        np.testing.assert_allclose(dA, held, rtol=1e-5, atol=1e-7)
        assert not np.any(dWs)


def partial_rule(x, scale):
    return np.sum(x * scale)


def partial_loss(x, scale):
    return partial_rule(x, scale) * 2.0


@ys.diffrule(partial_rule)
def partial_rule_template(dy, y, x, scale):
    dx = dy * scale  # noqa: F841 - templates assign d<param>


def test_a_rule_missing_an_input_gradient_is_an_error_not_a_zero():
    expected = "gives no gradient for its argument 'scale'"
    with pytest.raises(ys.errors.NoDiffRuleError, match=expected):
        ys.grad(partial_loss, np.ones(3), np.ones(3))


def test_a_rule_that_fails_at_these_values_is_refused_at_the_users_line():
    with pytest.raises(ys.errors.NoDiffRuleError, match="infinite or does not exist") as error:
        ys.grad(h.root_loss, 0.0)
    assert "helpers_rules.py" in str(error.value) and "root(t) * 2.0" in str(error.value)


def make_tanh_vjp(y, x):
    return lambda g: g * (1.0 - y * y)


def my_tanh(x):
    return np.tanh(x)


@ys.diffrule(my_tanh)
def my_tanh_rule(dy, y, x):
    dx = make_tanh_vjp(y, x)(dy)  # noqa: F841 - a rule assigns d<param>


def test_a_rule_may_call_a_helper_that_returns_the_vjp_as_autograd_writes_it():
    def f(x):
        return np.sum(my_tanh(x) * x)

    x = np.array([0.5, -1.5, 2.0])
    assert ys.grad(f, x)[0] == pytest.approx(f(x))
    ys.check_grad(f, x)


def softplus(y):
    return np.log1p(np.exp(y))


def test_an_expression_rule_for_a_function_with_a_parameter_named_y_says_to_use_a_template():
    with pytest.raises(TypeError, match="parameter named 'y'.*register a template"):
        ys.diffrule(softplus, "y", "dy / (1 + np.exp(-y))")


def softplus_again(y):
    return np.log1p(np.exp(y))


@ys.diffrule(softplus_again)
def softplus_again_rule(dy_out, y_out, y):
    dy = dy_out / (1.0 + np.exp(-y))  # noqa: F841 - a rule assigns d<param>


def test_a_template_names_its_incoming_gradient_as_it_likes():
    def f(x):
        return np.sum(softplus_again(x) * x)

    ys.check_grad(f, np.array([0.5, -1.5, 2.0]))


ys.diffrule(h.double, "x", "dy")  # wrong on purpose: the derivative is 2 * dy


def test_check_grad_catches_a_wrong_rule(rng):
    with pytest.raises(AssertionError, match="gradient check failed:\n  argument 0"):
        ys.check_grad(h.double_loss, rng.standard_normal(4))


def test_check_grad_shortens_its_step_for_a_steep_function(rng):
    x = rng.uniform(0.5, 1.0, 4)
    assert not np.allclose(ys.api.numerical_gradient(h.steep_loss, (x,), 0),
                           ys.grad(h.steep_loss, x)[1][0], rtol=1e-5)  # the usual step is too long
    ys.check_grad(h.steep_loss, x)


def test_an_expression_rule_takes_keyword_only_parameters_and_defaults(rng):
    """Every parameter of the function, keyword-only ones and defaults too:
    `p` is powsum's (2.0, or 3.0 by keyword), never the module's `p`."""
    x = rng.uniform(0.5, 1.5, 4)
    ys.check_grad(h.powsum_loss, x)
    ys.check_grad(h.scaled_sin_loss, x)
    ys.check_grad(h.leaky_loss, rng.standard_normal(6), 0.2)


def test_a_template_that_names_its_parameters_otherwise_is_refused():
    with pytest.raises(TypeError, match="'alpha', which renamed has not"):
        @ys.diffrule(h.renamed)
        def renamed_rule(dy, y, A, W, alpha=1.0, **kw):
            dA = dy * alpha @ W.T  # noqa: F841
    with pytest.raises(TypeError, match="'W' in another place"):
        @ys.diffrule(h.renamed)
        def swapped_rule(dy, y, W, A, scale=1.0):
            dA = dy @ W.T  # noqa: F841


def test_a_rule_giving_the_wrong_shape_is_refused_at_the_users_line(rng):
    with pytest.raises(ys.errors.NoDiffRuleError, match="sum the rule's expression") as error:
        ys.grad(h.soft_scalar_loss, rng.standard_normal(3), np.array([1.5]))
    assert "helpers_rules.py" in str(error.value)
