"""Primitives that are recorded (their values are needed) but carry no gradient."""

import operator

import numpy as np

from yota_src.rules import nondifferentiable

nondifferentiable(
    # comparisons and logic
    operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne,
    operator.and_, operator.or_, operator.xor, operator.invert, operator.floordiv,
    np.less, np.less_equal, np.greater, np.greater_equal, np.equal, np.not_equal,
    np.logical_and, np.logical_or, np.logical_not, np.logical_xor,
    np.isfinite, np.isnan, np.isinf, np.all, np.any, np.count_nonzero,
    # piecewise constant
    np.sign, np.floor, np.ceil, np.round, np.rint, np.trunc, np.floor_divide,
    # positions
    np.argmax, np.argmin, np.argsort, np.nonzero, np.flatnonzero,
    # constructors
    np.zeros, np.ones, np.full, np.empty, np.zeros_like, np.ones_like, np.full_like,
    np.empty_like, np.arange, np.eye, np.identity, np.linspace,
)

nondifferentiable(
    np.heaviside, np.searchsorted, np.digitize, np.unique, np.argwhere, np.extract,
    np.isclose, np.allclose, np.array_equal, np.bincount, np.histogram, np.shape, np.ndim,
    np.size, np.copysign, np.signbit, np.spacing, np.nextafter, np.iscomplex, np.isreal,
    np.isneginf, np.isposinf, np.fix, np.tri, np.diag_indices, np.tril_indices,
    np.triu_indices, np.indices, np.meshgrid, np.logspace, np.geomspace,
)
# Random draws: recorded (re-drawn at each call of the generated code), no gradient.
# Listed by name, so the registry is the same for every NumPy version.
RANDOM_DRAWS = (
    "beta", "binomial", "chisquare", "choice", "dirichlet", "exponential", "f", "gamma",
    "geometric", "gumbel", "hypergeometric", "laplace", "logistic", "lognormal", "logseries",
    "multinomial", "multivariate_normal", "negative_binomial", "noncentral_chisquare",
    "noncentral_f", "normal", "pareto", "permutation", "poisson", "power", "rand", "randint",
    "randn", "random", "random_integers", "random_sample", "ranf", "rayleigh", "sample",
    "shuffle", "standard_cauchy", "standard_exponential", "standard_gamma", "standard_normal",
    "standard_t", "triangular", "uniform", "vonmises", "wald", "weibull", "zipf",
)
nondifferentiable(*(getattr(np.random, name) for name in RANDOM_DRAWS))
