"""Primitives that are recorded (their values are needed) but pass no gradient.

Each function is declared at the narrowest level that is true (see
tests/differentiate/test_primitive_audit.py for the audit, argument by argument):

* `nondifferentiable`: the result is an integer, a boolean, or piecewise
  constant in *every* argument, so its gradient is zero almost everywhere.
* `nodiff`: piecewise constant in the named arguments only; the function has
  a template for its other arguments.
* `refused`: a float that reaches it has a derivative that cannot be given
  exactly; differentiating through it is a NoDiffRuleError.
"""

import math
import operator

import numpy as np

from yota_src.rules import nodiff, nondifferentiable, primitives, refused

nondifferentiable(primitives.stop_gradient)  # a declared parameter of an unrolled function

nondifferentiable(
    # comparisons and logic: boolean results
    operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne,
    operator.and_, operator.or_, operator.xor, operator.invert, operator.contains, operator.is_,
    np.less, np.less_equal, np.greater, np.greater_equal, np.equal, np.not_equal,
    np.logical_and, np.logical_or, np.logical_not, np.logical_xor,
    np.isfinite, np.isnan, np.isinf, np.isneginf, np.isposinf, np.signbit, np.iscomplex,
    np.isreal, np.isclose, np.allclose, np.array_equal, np.all, np.any,
    # piecewise constant in every argument
    operator.floordiv, np.floor_divide, np.sign, np.floor, np.ceil, np.round, np.rint,
    np.trunc, np.fix, np.spacing,
    # positions and counts: integer results
    np.argmax, np.argmin, np.nanargmax, np.nanargmin, np.argsort, np.nonzero, np.flatnonzero,
    np.argwhere, np.searchsorted, np.digitize, np.count_nonzero, np.shape, np.ndim, np.size,
    np.diag_indices, np.tril_indices, np.triu_indices, np.indices,
    # constructors that read only shapes, integers and dtypes, never float values
    np.zeros, np.ones, np.empty, np.zeros_like, np.ones_like, np.empty_like, np.eye,
    np.identity, np.tri,
)

# Piecewise constant in these arguments; the others have templates.
PIECEWISE_CONSTANT_ARGUMENTS = {
    np.full: ("shape",),  # np.full(shape, fill_value): the fill value has a gradient
    np.full_like: ("a",),  # only a's shape and dtype are read
    np.arange: ("stop",),  # stop decides the length, start and step the values
    np.heaviside: ("x1",),  # x2 is the value where x1 == 0
    np.copysign: ("x2",),  # only the sign of x2 is read
    math.copysign: ("x2",),
    np.nextafter: ("x2",),  # x2 decides the direction of one ulp
    np.bincount: ("x", "minlength"),  # the bins; weights are summed
    np.extract: ("condition",),  # the mask; arr's selected values pass through
    np.compress: ("condition",),  # the mask; a's selected values pass through
}
for function, arguments in PIECEWISE_CONSTANT_ARGUMENTS.items():
    nodiff(function, *arguments)

# Random draws: recorded (re-drawn at each call of the generated code). Listed
# by name, so the registry is the same for every NumPy version. A sample is a
# function of its parameters (loc, scale, the array permuted, p, ...), but its
# derivative depends on how the sample is drawn, so a float reaching one is
# refused; integer and shape arguments (size, low, high) are never differentiated.
RANDOM_DRAWS = (
    "beta", "binomial", "chisquare", "choice", "dirichlet", "exponential", "f", "gamma",
    "geometric", "gumbel", "hypergeometric", "laplace", "logistic", "lognormal", "logseries",
    "multinomial", "multivariate_normal", "negative_binomial", "noncentral_chisquare",
    "noncentral_f", "normal", "pareto", "permutation", "poisson", "power", "rand", "randint",
    "randn", "random", "random_integers", "random_sample", "ranf", "rayleigh", "sample",
    "shuffle", "standard_cauchy", "standard_exponential", "standard_gamma", "standard_normal",
    "standard_t", "triangular", "uniform", "vonmises", "wald", "weibull", "zipf",
)
PATHWISE_DRAWS = ("exponential", "gumbel", "laplace", "logistic", "lognormal", "normal",
                  "rayleigh", "uniform")  # templates/random.py
refused(
    *(getattr(np.random, name) for name in RANDOM_DRAWS if name not in PATHWISE_DRAWS),
    reason="the derivative of a random draw with respect to its parameters depends on how "
           "it is drawn. Draw standard noise and transform it instead, e.g. "
           "`mu + sigma * rng.standard_normal(n)` or `x[rng.permutation(len(x))]`",
)
