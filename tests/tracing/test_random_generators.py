"""Random generators as objects (issue 8, item 3): a Generator or RandomState
passed in, made in the function or read from a global is drawn from by the
generated code, call by call, as by the function itself."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import yota_src as ys

GLOBAL_RNG = np.random.default_rng(0)


def reparameterised(mu, log_sigma, rng):
    eps = rng.normal(size=mu.shape)
    keep = rng.random(mu.shape) < 0.8  # a dropout mask
    return np.sum((mu + np.exp(log_sigma) * eps) ** 2 * keep)


def legacy_state(mu, log_sigma, rs):
    return np.sum(mu * rs.randn(*mu.shape) + np.exp(log_sigma) * rs.uniform(size=mu.shape))


def made_inside(mu, log_sigma):
    rng = np.random.default_rng(42)
    rs = np.random.RandomState(1)
    return np.sum(mu * rng.standard_normal(mu.shape) + log_sigma * rs.randn(*mu.shape))


def from_a_global(mu, log_sigma):
    return np.sum(mu * GLOBAL_RNG.normal(size=mu.shape) + log_sigma)


MU, LOG_SIGMA = np.array([0.5, -1.0, 2.0]), np.array([0.1, 0.2, -0.3])
CASES = {
    "Generator argument": (reparameterised, lambda: np.random.default_rng(3)),
    "RandomState argument": (legacy_state, lambda: np.random.RandomState(3)),
    "made inside": (made_inside, None),
}


@pytest.mark.parametrize("f, make", CASES.values(), ids=CASES.keys())
def test_draws_match_one_call_of_f_and_gradients_match_with_the_same_noise(f, make):
    args = (MU, LOG_SIGMA) + ((make(),) if make else ())
    native = f(*(MU, LOG_SIGMA) + ((make(),) if make else ()))
    value, g = ys.grad(f, *args)
    assert value == pytest.approx(native)
    df = ys.simplegrad(f, *args)

    def fixed_noise(mu, log_sigma):  # the same draws at every evaluation
        return f(mu, log_sigma, *((make(),) if make else ()))

    got = df(MU, LOG_SIGMA, *((make(),) if make else ()))
    expected = ys.grad(fixed_noise, MU, LOG_SIGMA)[1]
    np.testing.assert_allclose(got[1], expected[0])
    ys.check_grad(fixed_noise, MU, LOG_SIGMA)


def test_each_call_draws_new_numbers_from_the_generator_passed():
    rng = np.random.default_rng(5)
    first = ys.grad(reparameterised, MU, LOG_SIGMA, rng)[0]
    second = ys.grad(reparameterised, MU, LOG_SIGMA, rng)[0]
    assert first != second
    rng_native = np.random.default_rng(5)
    assert [reparameterised(MU, LOG_SIGMA, rng_native) for _ in range(2)] == [first, second]


def test_a_module_drawing_from_an_argument_is_saved_and_runs_alone(tmp_path):
    path = tmp_path / "grad_reparameterised.py"
    ys.simplegrad(reparameterised, MU, LOG_SIGMA, np.random.default_rng(3)).save(path)
    script = (f"import sys; sys.path.insert(0, {str(tmp_path)!r})\n"
              "import numpy as np\nfrom grad_reparameterised import grad_reparameterised\n"
              "out = grad_reparameterised(np.array([0.5, -1.0, 2.0]), np.array([0.1, 0.2, -0.3]),"
              " np.random.default_rng(3))\nprint(repr(float(out[0])))\n")
    result = subprocess.run([sys.executable, "-I", "-c", script], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert float(result.stdout) == pytest.approx(
        reparameterised(MU, LOG_SIGMA, np.random.default_rng(3)))


def test_a_global_generator_is_read_live_and_saving_names_it():
    global GLOBAL_RNG
    GLOBAL_RNG = np.random.default_rng(0)
    native = from_a_global(MU, LOG_SIGMA)
    GLOBAL_RNG = np.random.default_rng(0)
    assert ys.grad(from_a_global, MU, LOG_SIGMA)[0] == pytest.approx(native)
    with pytest.raises(ys.errors.UnsaveableError, match="random generator GLOBAL_RNG"):
        ys.simplegrad(from_a_global, MU, LOG_SIGMA).save("never_written.py")


def test_another_kind_of_generator_is_refused_by_the_guard():
    df = ys.simplegrad(reparameterised, MU, LOG_SIGMA, np.random.default_rng(3))
    with pytest.raises(ys.errors.SignatureMismatch, match="rng of type Generator"):
        df(MU, LOG_SIGMA, np.random.RandomState(3))


def test_check_grad_gives_every_evaluation_the_same_draws():
    def f(p, rs):
        return np.sum((p + rs.randn(3)) ** 2)

    rs = np.random.RandomState(0)
    ys.check_grad(f, np.array([0.5, 1.0, -1.0]), rs)
    assert rs.randn() == np.random.RandomState(0).randn()  # left where it stood


def test_a_dynamic_call_draws_from_the_generator_it_is_given():
    def f(x, rs):
        u = rs.rand()
        return x * u if u < 0.5 else x * x * u

    for epoch in range(4):
        value, _ = ys.grad(f, 2.0, np.random.RandomState(epoch + 1), dynamic=True)
        assert value == f(2.0, np.random.RandomState(epoch + 1))


def reparameterised(mu, log_sigma, rng):
    """A VAE's sample: the gradient flows through the draw's parameters."""
    z = rng.normal(mu, np.exp(log_sigma))
    return np.sum(z ** 2 + np.sin(z))


def every_pathwise_draw(mu, log_sigma, rng):
    z = rng.normal(loc=mu, scale=np.exp(log_sigma), size=(4, 3))
    u = rng.uniform(mu[0], mu[0] + np.exp(log_sigma[1]), size=4)
    e = rng.exponential(np.exp(log_sigma))
    r = rng.rayleigh(scale=np.exp(mu))
    ln = rng.lognormal(mu, 0.3)
    others = rng.laplace(mu, 2.0) + rng.gumbel(0.5, np.exp(mu)) + rng.logistic(mu)
    return (np.sum(z ** 2) + np.sum(u ** 3) + np.sum(e * mu) + np.sum(r) + np.sum(np.sqrt(ln))
            + np.sum(others ** 2))


def global_draws(mu, log_sigma):
    np.random.seed(3)
    return np.sum(np.random.normal(mu, np.exp(log_sigma)) ** 2) + np.sum(np.random.uniform(mu))


@pytest.mark.parametrize("f", [reparameterised, every_pathwise_draw])
@pytest.mark.parametrize("make", [np.random.default_rng, np.random.RandomState])
@pytest.mark.parametrize("seed", [0, 1])
def test_draws_are_differentiated_along_the_path_numpy_draws_them(f, make, seed):
    mu, log_sigma = np.array([0.3, -0.2, 0.5]), np.array([-0.5, 0.1, 0.2])
    value, _ = ys.grad(f, mu, log_sigma, make(seed))
    assert value == pytest.approx(f(mu, log_sigma, make(seed)))
    ys.check_grad(f, mu, log_sigma, make(seed))


def test_draws_from_numpy_s_global_generator_are_differentiated_too():
    mu, log_sigma = np.array([0.3, -0.2, 0.5]), np.array([-0.5, 0.1, 0.2])
    assert ys.grad(global_draws, mu, log_sigma)[0] == pytest.approx(global_draws(mu, log_sigma))
    ys.check_grad(global_draws, mu, log_sigma)


@pytest.mark.parametrize("method", ["gamma", "beta", "standard_gamma", "dirichlet"])
def test_draws_without_a_pathwise_derivative_are_refused_naming_the_draw(method):
    def f(a, rng):
        draw = getattr(rng, method)
        return np.sum(draw(np.exp(a)) if method != "beta" else draw(np.exp(a), 2.0))

    with pytest.raises(ys.errors.NoDiffRuleError, match=rf"{method}\(\) has no pathwise"):
        ys.grad(f, np.array([0.3, 0.5]), np.random.default_rng(0))


def draws_within_one_line(x, rng):
    """Three draws in one expression, the first used last: the generated code
    must draw them in the order the function does."""
    return np.sum(rng.normal(size=3) + x * rng.normal(size=3) + np.exp(x) * rng.normal(size=3))


def global_draws_within_one_line(x):
    np.random.seed(1)
    return np.sum(np.random.rand(3) + x * np.random.randn(3) + np.exp(x) * np.random.rand(3))


@pytest.mark.parametrize("make", [np.random.default_rng, np.random.RandomState])
def test_draws_run_in_the_order_the_function_makes_them(make):
    x = np.array([0.3, -0.2, 0.5])
    gradient = ys.simplegrad(draws_within_one_line, x, make(0))
    assert gradient(x, make(5))[0] == pytest.approx(draws_within_one_line(x, make(5)))
    assert ys.grad(draws_within_one_line, x, make(0))[0] == pytest.approx(
        draws_within_one_line(x, make(0)))
    assert ys.grad(global_draws_within_one_line, x)[0] == pytest.approx(
        global_draws_within_one_line(x))
    ys.check_grad(global_draws_within_one_line, x)


def draws_into_buffers(mu, s, rng):
    noise = np.empty(3)
    rng.standard_normal(out=noise)
    u = np.zeros((2, 2))
    rng.random(out=u)
    gamma = np.empty(2)
    rng.standard_gamma(2.0, out=gamma)
    return np.sum((mu + s * noise) ** 2) + np.sum(u * s) + np.sum(gamma * mu[:2])


def test_draws_into_an_out_buffer_draw_one_number_per_element():
    mu, s = np.array([0.3, -0.2, 0.5]), 0.7
    for seed in (0, 1):
        value = ys.grad(draws_into_buffers, mu, s, np.random.default_rng(seed))[0]
        assert value == pytest.approx(draws_into_buffers(mu, s, np.random.default_rng(seed)))
        ys.check_grad(draws_into_buffers, mu, s, np.random.default_rng(seed))


@pytest.mark.parametrize("f", [
    lambda mu, rng: np.sum(rng.normal(mu, 0.0 * mu[0], size=3)),
    lambda mu, rng: np.sum(rng.uniform(mu[0], mu[0], size=3)),
    lambda mu, rng: np.sum(rng.exponential(mu * 0.0)),
], ids=["normal", "uniform", "exponential"])
def test_a_draw_with_no_spread_is_refused_rather_than_nan(f):
    with pytest.raises(ys.errors.NoDiffRuleError, match="spread of 0"):
        ys.grad(f, np.array([0.4, 0.9, 1.3]), np.random.default_rng(0))


def test_spawning_inside_the_function_is_refused_before_it_spawns():
    def f(mu, rng):
        child = rng.spawn(1)[0]
        return np.sum(child.normal(mu, 1.0, 3))

    rng = np.random.default_rng(5)
    with pytest.raises(ys.errors.UnsupportedSyntaxError, match="spawn"):
        ys.grad(f, 0.5, rng)
    assert rng.bit_generator.seed_seq.n_children_spawned == 0
