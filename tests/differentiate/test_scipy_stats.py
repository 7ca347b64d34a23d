"""scipy.stats rules against central finite differences, called the ways
people call them: positional parameters, loc=/scale= keywords, frozen
distributions (`norm(mu, sigma).logpdf(x)`) made inside the function or
read from a global."""

import numpy as np
import pytest

scipy_stats = pytest.importorskip(
    "scipy.stats", reason="SciPy is not installed: pip install yota-src[scipy]")

import scipy.special  # noqa: E402
from scipy.stats import dirichlet, multivariate_normal, norm, poisson  # noqa: E402

import yota_src as ys  # noqa: E402
from yota_src.errors import NoDiffRuleError  # noqa: E402

# shape parameters, read as constants; the densities' own shape gradients are tested below
SHAPES = {"norm": (), "t": (4.5,), "beta": (2.5, 1.7), "gamma": (2.3,), "chi2": (3.3,)}
# where the standardized variable z lives
SUPPORT = {"norm": (-2.0, 2.0), "t": (-2.0, 2.0), "beta": (0.1, 0.9), "gamma": (0.3, 3.0),
           "chi2": (0.3, 3.0)}
METHODS = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]
CASES = [(name, method) for name in SHAPES for method in METHODS]


def positional(name, method, w, x, loc, scale):
    dist = getattr(scipy.stats, name)
    return np.sum(getattr(dist, method)(x, *SHAPES[name], loc, scale) * w)


def keywords(name, method, w, x, loc, scale):
    dist = getattr(scipy.stats, name)
    return np.sum(getattr(dist, method)(x, *SHAPES[name], loc=loc, scale=scale) * w)


def frozen(name, method, w, x, loc, scale):
    distribution = getattr(scipy.stats, name)(*SHAPES[name], loc, scale)
    return np.sum(getattr(distribution, method)(x) * w)


def frozen_by_keyword(name, method, w, x, loc, scale):
    distribution = getattr(scipy.stats, name)(*SHAPES[name], scale=scale, loc=loc)
    return np.sum(getattr(distribution, method)(x) * w)


def standard(name, method, w, x):
    return np.sum(getattr(getattr(scipy.stats, name), method)(x, *SHAPES[name]) * w)


def sample(rng, name, case):
    """(w, x, loc, scale): floats, or x (3, 4) with loc (4,) and scale (3, 1)."""
    low, high = SUPPORT[name]
    if case == "float":
        loc, scale = 0.2, 1.3
        return 0.7, loc + scale * float(rng.uniform(low, high)), loc, scale
    loc, scale = rng.uniform(-0.2, 0.2, 4), rng.uniform(1.0, 2.0, (3, 1))
    return rng.uniform(-1.0, 1.0, (3, 4)), loc + scale * rng.uniform(low, high, (3, 4)), loc, scale


@pytest.mark.parametrize("case", ["float", "array"])
@pytest.mark.parametrize("spelling", [positional, keywords, frozen, frozen_by_keyword],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("name, method", CASES, ids=[f"{n}.{m}" for n, m in CASES])
def test_location_scale_rules(name, method, spelling, case, rng):
    ys.check_grad(spelling, name, method, *sample(rng, name, case))


@pytest.mark.parametrize("name, method", CASES, ids=[f"{n}.{m}" for n, m in CASES])
def test_standard_distribution(name, method, rng):
    w, x, _, _ = sample(rng, name, "array")
    low, high = SUPPORT[name]
    ys.check_grad(standard, name, method, w, rng.uniform(low, high, (3, 4)))


def density_in_shapes(name, method, w, x, *shapes):
    return np.sum(getattr(getattr(scipy.stats, name), method)(x, *shapes) * w)


SHAPED = [(name, method) for name in ("t", "beta", "gamma", "chi2") for method in ("logpdf", "pdf")]


@pytest.mark.parametrize("name, method", SHAPED, ids=[f"{n}.{m}" for n, m in SHAPED])
def test_density_shape_parameters(name, method, rng):
    low, high = SUPPORT[name]
    ys.check_grad(density_in_shapes, name, method, 0.7, float(rng.uniform(low, high)),
                  *SHAPES[name])
    shapes = [np.full(4, s) + rng.uniform(0.0, 0.5, 4) for s in SHAPES[name]]
    ys.check_grad(density_in_shapes, name, method, rng.uniform(-1, 1, (3, 4)),
                  rng.uniform(low, high, (3, 4)), *shapes)


def distribution_function_in_shape(x, df):
    return np.sum(scipy.stats.t.cdf(x, df))


def test_distribution_function_shape_is_refused():
    with pytest.raises(NoDiffRuleError, match="scipy.stats.t.cdf with respect to `df` has no "
                                              "closed form"):
        ys.grad(distribution_function_in_shape, np.array([0.1, 0.5]), 3.5)


QUANTILES = ["ppf", "isf"]


def quantile(method, w, q, loc, scale):
    return np.sum(getattr(norm, method)(q, loc, scale) * w)


@pytest.mark.parametrize("method", QUANTILES)
def test_normal_quantiles(method, rng):
    ys.check_grad(quantile, method, 0.7, 0.3, 0.2, 1.5)
    ys.check_grad(quantile, method, rng.uniform(-1, 1, (3, 4)), rng.uniform(0.05, 0.95, (3, 4)),
                  rng.uniform(-1, 1, 4), rng.uniform(1.0, 2.0, (3, 1)))


PRIOR = norm(0.5, 2.0)


def with_global_prior(x):
    return np.sum(PRIOR.logpdf(x)) + np.sum(PRIOR.logcdf(x))


def test_frozen_distribution_from_a_global(rng):
    ys.check_grad(with_global_prior, rng.standard_normal(4))
    source = ys.simplegrad(with_global_prior, np.ones(3)).source
    assert "scipy.stats.norm.logpdf(x, loc=0.5, scale=2.0)" in source


def module_path(x, mu, sigma):
    return np.sum(scipy.stats.norm.logpdf(x, mu, sigma)) + scipy.stats.t(3.0, mu).logpdf(0.5)


def test_called_through_the_module(rng):
    ys.check_grad(module_path, rng.standard_normal(4), 0.3, 1.4)


# --- poisson ----------------------------------------------------------------------------

COUNTS = np.array([[0.0, 1.0, 3.0, 7.0], [2.0, 2.0, 5.0, 0.0], [1.0, 4.0, 2.0, 9.0]])
POISSON = ["logpmf", "pmf", "cdf", "logcdf", "sf", "logsf"]


def poisson_positional(method, w, mu):
    return np.sum(getattr(poisson, method)(COUNTS, mu) * w)


def poisson_keyword_with_shift(method, w, mu):
    return np.sum(getattr(poisson, method)(COUNTS + 1, mu=mu, loc=1) * w)


def poisson_frozen(method, w, mu):
    return np.sum(getattr(poisson(mu), method)(COUNTS) * w)


@pytest.mark.parametrize("spelling", [poisson_positional, poisson_keyword_with_shift,
                                      poisson_frozen], ids=lambda f: f.__name__)
@pytest.mark.parametrize("method", POISSON)
def test_poisson_in_the_mean(method, spelling, rng):
    w = rng.uniform(-1.0, 1.0, (3, 4))
    ys.check_grad(spelling, method, w, 2.5)
    ys.check_grad(spelling, method, w, rng.uniform(1.0, 4.0, 4))


def poisson_in_counts(k, mu):
    return np.sum(poisson.logpmf(k, mu))


def test_poisson_counts_pass_no_gradient():
    _, g = ys.grad(poisson_in_counts, np.array([1.0, 3.0]), 2.0)
    assert g[0] is None or np.all(g[0] == 0)


# --- dirichlet --------------------------------------------------------------------------

def dirichlet_on_the_simplex(z, alpha):
    """x = softmax(z) keeps sum(x) = 1, as scipy requires of x."""
    return np.sum(dirichlet.logpdf(scipy.special.softmax(z, axis=0), alpha))


def dirichlet_density_frozen(z, alpha):
    return np.sum(np.sin(dirichlet(alpha).pdf(scipy.special.softmax(z, axis=0))))


def dirichlet_without_last(x, alpha):
    """x without its last component, which scipy completes as 1 - sum(x)."""
    return np.sum(dirichlet.logpdf(x, alpha))


@pytest.mark.parametrize("fn", [dirichlet_on_the_simplex, dirichlet_density_frozen],
                         ids=lambda f: f.__name__)
def test_dirichlet(fn, rng):
    alpha = np.array([1.5, 2.0, 3.0])
    ys.check_grad(fn, rng.standard_normal(3), alpha)
    ys.check_grad(fn, rng.standard_normal((3, 4)), alpha)


def test_dirichlet_with_the_last_component_left_out():
    alpha = np.array([1.5, 2.0, 3.0])
    ys.check_grad(dirichlet_without_last, np.array([0.2, 0.3]), alpha)
    ys.check_grad(dirichlet_without_last, np.array([[0.2, 0.3], [0.3, 0.3]]), alpha)


# --- multivariate_normal ----------------------------------------------------------------

COVARIANCE = np.array([[2.0, 0.3, 0.1], [0.3, 1.5, -0.2], [0.1, -0.2, 1.8]])


def mvn_positional(x, mean, cov):
    return np.sum(np.sin(multivariate_normal.logpdf(x, mean, cov)))


def mvn_keywords(x, mean, cov):
    return np.sum(np.sin(multivariate_normal.pdf(x, mean=mean, cov=cov)))


def mvn_frozen(x, mean, cov):
    return np.sum(np.sin(multivariate_normal(mean, cov).logpdf(x)))


@pytest.mark.parametrize("fn", [mvn_positional, mvn_keywords, mvn_frozen],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("cov", ["full", "diagonal", "number"])
def test_multivariate_normal(fn, cov, rng):
    covariance = {"full": COVARIANCE, "diagonal": np.array([1.0, 2.0, 0.5]), "number": 1.7}[cov]
    ys.check_grad(fn, 0.5 * rng.standard_normal((5, 3)), 0.3 * rng.standard_normal(3), covariance)
    ys.check_grad(fn, 0.5 * rng.standard_normal(3), 0.3 * rng.standard_normal(3), covariance)


def test_multivariate_normal_reads_the_lower_triangle(rng):
    """scipy reads cov's lower triangle only: the upper one gets no gradient."""
    cov = COVARIANCE + np.triu(np.full((3, 3), 0.4), 1)
    ys.check_grad(mvn_positional, rng.standard_normal((4, 3)), np.zeros(3), cov)
    _, g = ys.grad(mvn_positional, rng.standard_normal((4, 3)), np.zeros(3), cov)
    assert np.all(np.triu(g[2], 1) == 0)


def test_multivariate_normal_in_one_dimension(rng):
    ys.check_grad(mvn_positional, rng.standard_normal(5), 0.3, 1.7)
    ys.check_grad(mvn_keywords, rng.standard_normal((5, 1)), np.array([0.3]),
                  np.array([[1.7]]))


def mvn_entropy(cov):
    return multivariate_normal.entropy(cov=cov) + multivariate_normal(np.zeros(3), cov).entropy()


def test_multivariate_normal_entropy():
    ys.check_grad(mvn_entropy, COVARIANCE)


GAUSSIAN = multivariate_normal(np.zeros(3), COVARIANCE)


def with_global_gaussian(x):
    return np.sum(GAUSSIAN.logpdf(x))


def test_frozen_multivariate_normal_from_a_global(rng):
    ys.check_grad(with_global_gaussian, rng.standard_normal((4, 3)))
    source = ys.simplegrad(with_global_gaussian, np.ones((4, 3))).source
    assert "scipy.stats.multivariate_normal.logpdf(x, mean=mean, cov=cov" in source


def draws(mu):
    return np.sum(norm.rvs(size=3) + mu)


def test_scipy_draws_are_draws_not_constants():
    """norm.rvs draws from NumPy's global generator: drawn again at each call."""
    df = ys.simplegrad(draws, 0.5)
    assert "scipy.stats.norm.rvs(size=3)" in df.source
    assert df(0.5)[0] != df(0.5)[0]


def given_a_distribution(x, distribution):
    return np.sum(distribution.logpdf(x))


def test_frozen_distribution_as_an_argument_gets_gradients_for_its_parameters(rng):
    x = rng.standard_normal(3)
    _, g = ys.grad(given_a_distribution, x, norm(0.5, 2.0))
    z = (x - 0.5) / 2.0
    assert np.isclose(g[1][("args", 0)], np.sum(z / 2.0))
    assert np.isclose(g[1][("args", 1)], np.sum((z * z - 1.0) / 2.0))
    h = 1e-6  # (check_grad would also move the support bounds, dist.a = -inf)
    numeric = (given_a_distribution(x, norm(0.5, 2.0 + h))
               - given_a_distribution(x, norm(0.5, 2.0 - h))) / (2 * h)
    assert np.isclose(g[1][("args", 1)], numeric)


def reads_parameters_back(x, mu):
    distribution = norm(mu, scale=2.0)
    return np.sum(distribution.logpdf(x)) * distribution.args[0] + distribution.kwds["scale"]


def test_frozen_distribution_keeps_its_parameters_as_given(rng):
    ys.check_grad(reads_parameters_back, rng.standard_normal(3), 0.3)
