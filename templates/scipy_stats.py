"""scipy.stats: densities, distribution functions and their logarithms for
norm, t, beta, gamma, chi2, poisson, dirichlet and multivariate_normal.

Loaded by yota_src.rules once the user's code has imported scipy.stats.
A univariate distribution is a location-scale family: with z = (x - loc) /
scale and the standard density's log-slope s = d log f(z) / dz,

    d logpdf / dx = s / scale,  d / dloc = -s / scale,  d / dscale = -(s z + 1) / scale,

and a distribution function F(z) (cdf, sf and their logarithms) moves with
its slope r = dF/dz: r / scale, -r / scale and -r z / scale. pdf is
exp(logpdf): the same, times the result. A frozen distribution,
`norm(mu, sigma).logpdf(x)`, is recorded as `norm.logpdf(x, loc=mu,
scale=sigma)` (yota_src/core/distributions.py), so it uses these rules too.
Shape parameters have gradients where the derivative has a closed form (the
density's); a distribution function's derivative in its shape (the
incomplete gamma or beta function's) is refused, as in HIPS autograd.
"""

import math

import numpy as np
import scipy.special
import scipy.stats

from yota_src.rules import adjoint, is_static, nodiff

from .helpers import unbroadcast
from .linalg import triangle_read
from .scipy_special import no_closed_form, ratio_or_zero

LOG_ROOT_TWO_PI = 0.5 * math.log(2.0 * math.pi)


def is_number(value, number):
    """A static scalar equal to `number` (the default loc=0, scale=1)."""
    return is_static(value) and np.ndim(value) == 0 and value == number


def standardized(x, loc, scale):
    """z = (x - loc) / scale, without the steps the defaults make void."""
    z = x if is_number(loc, 0) else x - loc
    return z if is_number(scale, 1) else z / scale


def per_scale(g, scale):
    return g if is_number(scale, 1) else g / scale


# --- norm -----------------------------------------------------------------------------


def normal_density(z):
    """The standard normal density."""
    return np.exp(-0.5 * z * z - LOG_ROOT_TWO_PI)


@adjoint(scipy.stats.norm.logpdf)
def norm_logpdf(dy, y, x, loc=0.0, scale=1.0):
    """The log-slope is -z."""
    z = standardized(x, loc, scale)
    dx = unbroadcast(per_scale(-dy * z, scale), x)
    dloc = unbroadcast(per_scale(dy * z, scale), loc)
    dscale = unbroadcast(per_scale(dy * (z * z - 1.0), scale), scale)


@adjoint(scipy.stats.norm.pdf)
def norm_pdf(dy, y, x, loc=0.0, scale=1.0):
    """As logpdf, times the density."""
    z = standardized(x, loc, scale)
    dx = unbroadcast(per_scale(-dy * y * z, scale), x)
    dloc = unbroadcast(per_scale(dy * y * z, scale), loc)
    dscale = unbroadcast(per_scale(dy * y * (z * z - 1.0), scale), scale)


@adjoint(scipy.stats.norm.cdf)
def norm_cdf(dy, y, x, loc=0.0, scale=1.0):
    """The slope is the density."""
    z = standardized(x, loc, scale)
    slope = normal_density(z)
    dx = unbroadcast(per_scale(dy * slope, scale), x)
    dloc = unbroadcast(per_scale(-dy * slope, scale), loc)
    dscale = unbroadcast(per_scale(-dy * slope * z, scale), scale)


@adjoint(scipy.stats.norm.sf)
def norm_sf(dy, y, x, loc=0.0, scale=1.0):
    """1 - cdf."""
    z = standardized(x, loc, scale)
    slope = -normal_density(z)
    dx = unbroadcast(per_scale(dy * slope, scale), x)
    dloc = unbroadcast(per_scale(-dy * slope, scale), loc)
    dscale = unbroadcast(per_scale(-dy * slope * z, scale), scale)


@adjoint(scipy.stats.norm.logcdf)
def norm_logcdf(dy, y, x, loc=0.0, scale=1.0):
    """Density over cdf, taken in logs (no underflow in the tail)."""
    z = standardized(x, loc, scale)
    slope = np.exp(-0.5 * z * z - LOG_ROOT_TWO_PI - y)
    dx = unbroadcast(per_scale(dy * slope, scale), x)
    dloc = unbroadcast(per_scale(-dy * slope, scale), loc)
    dscale = unbroadcast(per_scale(-dy * slope * z, scale), scale)


@adjoint(scipy.stats.norm.logsf)
def norm_logsf(dy, y, x, loc=0.0, scale=1.0):
    """Minus density over sf, taken in logs."""
    z = standardized(x, loc, scale)
    slope = -np.exp(-0.5 * z * z - LOG_ROOT_TWO_PI - y)
    dx = unbroadcast(per_scale(dy * slope, scale), x)
    dloc = unbroadcast(per_scale(-dy * slope, scale), loc)
    dscale = unbroadcast(per_scale(-dy * slope * z, scale), scale)


@adjoint(scipy.stats.norm.ppf)
def norm_ppf(dy, y, q, loc=0.0, scale=1.0):
    """y = loc + scale z with z = ndtri(q): dz/dq is one over the density at z."""
    z = standardized(y, loc, scale)
    dq = unbroadcast(dy * scale * np.exp(0.5 * z * z + LOG_ROOT_TWO_PI), q)
    dloc = unbroadcast(dy, loc)
    dscale = unbroadcast(dy * z, scale)


@adjoint(scipy.stats.norm.isf)
def norm_isf(dy, y, q, loc=0.0, scale=1.0):
    """ppf(1 - q)."""
    z = standardized(y, loc, scale)
    dq = unbroadcast(-dy * scale * np.exp(0.5 * z * z + LOG_ROOT_TWO_PI), q)
    dloc = unbroadcast(dy, loc)
    dscale = unbroadcast(dy * z, scale)


# --- t --------------------------------------------------------------------------------


def t_log_slope(z, df):
    return -(df + 1.0) * z / (df + z * z)


def t_df_score(z, df):
    """d logpdf / d df."""
    return 0.5 * (scipy.special.digamma((df + 1.0) / 2.0) - scipy.special.digamma(df / 2.0)
                  - 1.0 / df - np.log1p(z * z / df) + (df + 1.0) * z * z / (df * (df + z * z)))


@adjoint(scipy.stats.t.logpdf)
def t_logpdf(dy, y, x, df, loc=0.0, scale=1.0):
    z = standardized(x, loc, scale)
    slope = t_log_slope(z, df)
    dx = unbroadcast(per_scale(dy * slope, scale), x)
    dloc = unbroadcast(per_scale(-dy * slope, scale), loc)
    dscale = unbroadcast(per_scale(-dy * (slope * z + 1.0), scale), scale)
    ddf = unbroadcast(dy * t_df_score(z, df), df)


@adjoint(scipy.stats.t.pdf)
def t_pdf(dy, y, x, df, loc=0.0, scale=1.0):
    z = standardized(x, loc, scale)
    slope = t_log_slope(z, df)
    dx = unbroadcast(per_scale(dy * y * slope, scale), x)
    dloc = unbroadcast(per_scale(-dy * y * slope, scale), loc)
    dscale = unbroadcast(per_scale(-dy * y * (slope * z + 1.0), scale), scale)
    ddf = unbroadcast(dy * y * t_df_score(z, df), df)


@adjoint(scipy.stats.t.cdf)
def t_cdf(dy, y, x, df, loc=0.0, scale=1.0):
    z = standardized(x, loc, scale)
    slope = scipy.stats.t.pdf(z, df)
    dx = unbroadcast(per_scale(dy * slope, scale), x)
    dloc = unbroadcast(per_scale(-dy * slope, scale), loc)
    dscale = unbroadcast(per_scale(-dy * slope * z, scale), scale)
    ddf = no_closed_form("scipy.stats.t.cdf", "df")


@adjoint(scipy.stats.t.sf)
def t_sf(dy, y, x, df, loc=0.0, scale=1.0):
    z = standardized(x, loc, scale)
    slope = -scipy.stats.t.pdf(z, df)
    dx = unbroadcast(per_scale(dy * slope, scale), x)
    dloc = unbroadcast(per_scale(-dy * slope, scale), loc)
    dscale = unbroadcast(per_scale(-dy * slope * z, scale), scale)
    ddf = no_closed_form("scipy.stats.t.sf", "df")


@adjoint(scipy.stats.t.logcdf)
def t_logcdf(dy, y, x, df, loc=0.0, scale=1.0):
    z = standardized(x, loc, scale)
    slope = np.exp(scipy.stats.t.logpdf(z, df) - y)
    dx = unbroadcast(per_scale(dy * slope, scale), x)
    dloc = unbroadcast(per_scale(-dy * slope, scale), loc)
    dscale = unbroadcast(per_scale(-dy * slope * z, scale), scale)
    ddf = no_closed_form("scipy.stats.t.logcdf", "df")


@adjoint(scipy.stats.t.logsf)
def t_logsf(dy, y, x, df, loc=0.0, scale=1.0):
    z = standardized(x, loc, scale)
    slope = -np.exp(scipy.stats.t.logpdf(z, df) - y)
    dx = unbroadcast(per_scale(dy * slope, scale), x)
    dloc = unbroadcast(per_scale(-dy * slope, scale), loc)
    dscale = unbroadcast(per_scale(-dy * slope * z, scale), scale)
    ddf = no_closed_form("scipy.stats.t.logsf", "df")


# --- beta -----------------------------------------------------------------------------


def beta_log_slope(z, a, b):
    """d/dz of xlogy(a - 1, z) + xlog1py(b - 1, -z)."""
    return ratio_or_zero(a - 1.0, z) - ratio_or_zero(b - 1.0, 1.0 - z)


@adjoint(scipy.stats.beta.logpdf)
def beta_logpdf(dy, y, x, a, b, loc=0.0, scale=1.0):
    z = standardized(x, loc, scale)
    slope = beta_log_slope(z, a, b)
    both = scipy.special.digamma(a + b)
    dx = unbroadcast(per_scale(dy * slope, scale), x)
    dloc = unbroadcast(per_scale(-dy * slope, scale), loc)
    dscale = unbroadcast(per_scale(-dy * (slope * z + 1.0), scale), scale)
    da = unbroadcast(dy * (np.log(z) - scipy.special.digamma(a) + both), a)
    db = unbroadcast(dy * (np.log1p(-z) - scipy.special.digamma(b) + both), b)


@adjoint(scipy.stats.beta.pdf)
def beta_pdf(dy, y, x, a, b, loc=0.0, scale=1.0):
    z = standardized(x, loc, scale)
    slope = beta_log_slope(z, a, b)
    both = scipy.special.digamma(a + b)
    dx = unbroadcast(per_scale(dy * y * slope, scale), x)
    dloc = unbroadcast(per_scale(-dy * y * slope, scale), loc)
    dscale = unbroadcast(per_scale(-dy * y * (slope * z + 1.0), scale), scale)
    da = unbroadcast(dy * y * (np.log(z) - scipy.special.digamma(a) + both), a)
    db = unbroadcast(dy * y * (np.log1p(-z) - scipy.special.digamma(b) + both), b)


@adjoint(scipy.stats.beta.cdf)
def beta_cdf(dy, y, x, a, b, loc=0.0, scale=1.0):
    z = standardized(x, loc, scale)
    slope = scipy.stats.beta.pdf(z, a, b)
    dx = unbroadcast(per_scale(dy * slope, scale), x)
    dloc = unbroadcast(per_scale(-dy * slope, scale), loc)
    dscale = unbroadcast(per_scale(-dy * slope * z, scale), scale)
    da = no_closed_form("scipy.stats.beta.cdf", "a")
    db = no_closed_form("scipy.stats.beta.cdf", "b")


@adjoint(scipy.stats.beta.sf)
def beta_sf(dy, y, x, a, b, loc=0.0, scale=1.0):
    z = standardized(x, loc, scale)
    slope = -scipy.stats.beta.pdf(z, a, b)
    dx = unbroadcast(per_scale(dy * slope, scale), x)
    dloc = unbroadcast(per_scale(-dy * slope, scale), loc)
    dscale = unbroadcast(per_scale(-dy * slope * z, scale), scale)
    da = no_closed_form("scipy.stats.beta.sf", "a")
    db = no_closed_form("scipy.stats.beta.sf", "b")


@adjoint(scipy.stats.beta.logcdf)
def beta_logcdf(dy, y, x, a, b, loc=0.0, scale=1.0):
    z = standardized(x, loc, scale)
    slope = np.exp(scipy.stats.beta.logpdf(z, a, b) - y)
    dx = unbroadcast(per_scale(dy * slope, scale), x)
    dloc = unbroadcast(per_scale(-dy * slope, scale), loc)
    dscale = unbroadcast(per_scale(-dy * slope * z, scale), scale)
    da = no_closed_form("scipy.stats.beta.logcdf", "a")
    db = no_closed_form("scipy.stats.beta.logcdf", "b")


@adjoint(scipy.stats.beta.logsf)
def beta_logsf(dy, y, x, a, b, loc=0.0, scale=1.0):
    z = standardized(x, loc, scale)
    slope = -np.exp(scipy.stats.beta.logpdf(z, a, b) - y)
    dx = unbroadcast(per_scale(dy * slope, scale), x)
    dloc = unbroadcast(per_scale(-dy * slope, scale), loc)
    dscale = unbroadcast(per_scale(-dy * slope * z, scale), scale)
    da = no_closed_form("scipy.stats.beta.logsf", "a")
    db = no_closed_form("scipy.stats.beta.logsf", "b")


# --- gamma ----------------------------------------------------------------------------


def gamma_log_slope(z, a):
    """d/dz of xlogy(a - 1, z) - z."""
    return ratio_or_zero(a - 1.0, z) - 1.0


@adjoint(scipy.stats.gamma.logpdf)
def gamma_logpdf(dy, y, x, a, loc=0.0, scale=1.0):
    z = standardized(x, loc, scale)
    slope = gamma_log_slope(z, a)
    dx = unbroadcast(per_scale(dy * slope, scale), x)
    dloc = unbroadcast(per_scale(-dy * slope, scale), loc)
    dscale = unbroadcast(per_scale(-dy * (slope * z + 1.0), scale), scale)
    da = unbroadcast(dy * (np.log(z) - scipy.special.digamma(a)), a)


@adjoint(scipy.stats.gamma.pdf)
def gamma_pdf(dy, y, x, a, loc=0.0, scale=1.0):
    z = standardized(x, loc, scale)
    slope = gamma_log_slope(z, a)
    dx = unbroadcast(per_scale(dy * y * slope, scale), x)
    dloc = unbroadcast(per_scale(-dy * y * slope, scale), loc)
    dscale = unbroadcast(per_scale(-dy * y * (slope * z + 1.0), scale), scale)
    da = unbroadcast(dy * y * (np.log(z) - scipy.special.digamma(a)), a)


@adjoint(scipy.stats.gamma.cdf)
def gamma_cdf(dy, y, x, a, loc=0.0, scale=1.0):
    z = standardized(x, loc, scale)
    slope = scipy.stats.gamma.pdf(z, a)
    dx = unbroadcast(per_scale(dy * slope, scale), x)
    dloc = unbroadcast(per_scale(-dy * slope, scale), loc)
    dscale = unbroadcast(per_scale(-dy * slope * z, scale), scale)
    da = no_closed_form("scipy.stats.gamma.cdf", "a")


@adjoint(scipy.stats.gamma.sf)
def gamma_sf(dy, y, x, a, loc=0.0, scale=1.0):
    z = standardized(x, loc, scale)
    slope = -scipy.stats.gamma.pdf(z, a)
    dx = unbroadcast(per_scale(dy * slope, scale), x)
    dloc = unbroadcast(per_scale(-dy * slope, scale), loc)
    dscale = unbroadcast(per_scale(-dy * slope * z, scale), scale)
    da = no_closed_form("scipy.stats.gamma.sf", "a")


@adjoint(scipy.stats.gamma.logcdf)
def gamma_logcdf(dy, y, x, a, loc=0.0, scale=1.0):
    z = standardized(x, loc, scale)
    slope = np.exp(scipy.stats.gamma.logpdf(z, a) - y)
    dx = unbroadcast(per_scale(dy * slope, scale), x)
    dloc = unbroadcast(per_scale(-dy * slope, scale), loc)
    dscale = unbroadcast(per_scale(-dy * slope * z, scale), scale)
    da = no_closed_form("scipy.stats.gamma.logcdf", "a")


@adjoint(scipy.stats.gamma.logsf)
def gamma_logsf(dy, y, x, a, loc=0.0, scale=1.0):
    z = standardized(x, loc, scale)
    slope = -np.exp(scipy.stats.gamma.logpdf(z, a) - y)
    dx = unbroadcast(per_scale(dy * slope, scale), x)
    dloc = unbroadcast(per_scale(-dy * slope, scale), loc)
    dscale = unbroadcast(per_scale(-dy * slope * z, scale), scale)
    da = no_closed_form("scipy.stats.gamma.logsf", "a")


# --- chi2 -----------------------------------------------------------------------------


def chi2_log_slope(z, df):
    """d/dz of xlogy(df/2 - 1, z) - z/2."""
    return ratio_or_zero(df / 2.0 - 1.0, z) - 0.5


def chi2_df_score(z, df):
    """d logpdf / d df."""
    return 0.5 * (np.log(z) - scipy.special.digamma(df / 2.0) - math.log(2.0))


@adjoint(scipy.stats.chi2.logpdf)
def chi2_logpdf(dy, y, x, df, loc=0.0, scale=1.0):
    z = standardized(x, loc, scale)
    slope = chi2_log_slope(z, df)
    dx = unbroadcast(per_scale(dy * slope, scale), x)
    dloc = unbroadcast(per_scale(-dy * slope, scale), loc)
    dscale = unbroadcast(per_scale(-dy * (slope * z + 1.0), scale), scale)
    ddf = unbroadcast(dy * chi2_df_score(z, df), df)


@adjoint(scipy.stats.chi2.pdf)
def chi2_pdf(dy, y, x, df, loc=0.0, scale=1.0):
    z = standardized(x, loc, scale)
    slope = chi2_log_slope(z, df)
    dx = unbroadcast(per_scale(dy * y * slope, scale), x)
    dloc = unbroadcast(per_scale(-dy * y * slope, scale), loc)
    dscale = unbroadcast(per_scale(-dy * y * (slope * z + 1.0), scale), scale)
    ddf = unbroadcast(dy * y * chi2_df_score(z, df), df)


@adjoint(scipy.stats.chi2.cdf)
def chi2_cdf(dy, y, x, df, loc=0.0, scale=1.0):
    z = standardized(x, loc, scale)
    slope = scipy.stats.chi2.pdf(z, df)
    dx = unbroadcast(per_scale(dy * slope, scale), x)
    dloc = unbroadcast(per_scale(-dy * slope, scale), loc)
    dscale = unbroadcast(per_scale(-dy * slope * z, scale), scale)
    ddf = no_closed_form("scipy.stats.chi2.cdf", "df")


@adjoint(scipy.stats.chi2.sf)
def chi2_sf(dy, y, x, df, loc=0.0, scale=1.0):
    z = standardized(x, loc, scale)
    slope = -scipy.stats.chi2.pdf(z, df)
    dx = unbroadcast(per_scale(dy * slope, scale), x)
    dloc = unbroadcast(per_scale(-dy * slope, scale), loc)
    dscale = unbroadcast(per_scale(-dy * slope * z, scale), scale)
    ddf = no_closed_form("scipy.stats.chi2.sf", "df")


@adjoint(scipy.stats.chi2.logcdf)
def chi2_logcdf(dy, y, x, df, loc=0.0, scale=1.0):
    z = standardized(x, loc, scale)
    slope = np.exp(scipy.stats.chi2.logpdf(z, df) - y)
    dx = unbroadcast(per_scale(dy * slope, scale), x)
    dloc = unbroadcast(per_scale(-dy * slope, scale), loc)
    dscale = unbroadcast(per_scale(-dy * slope * z, scale), scale)
    ddf = no_closed_form("scipy.stats.chi2.logcdf", "df")


@adjoint(scipy.stats.chi2.logsf)
def chi2_logsf(dy, y, x, df, loc=0.0, scale=1.0):
    z = standardized(x, loc, scale)
    slope = -np.exp(scipy.stats.chi2.logpdf(z, df) - y)
    dx = unbroadcast(per_scale(dy * slope, scale), x)
    dloc = unbroadcast(per_scale(-dy * slope, scale), loc)
    dscale = unbroadcast(per_scale(-dy * slope * z, scale), scale)
    ddf = no_closed_form("scipy.stats.chi2.logsf", "df")


# --- poisson (the counts k and the shift loc are integers: only mu moves) ---------------


def poisson_log_mass_at_floor(k, mu, loc):
    """log pmf(floor(k - loc), mu): the cdf, pdtr(floor(k - loc), mu), has
    slope -pmf(floor(k - loc), mu) in mu."""
    j = np.floor(k if is_number(loc, 0) else k - loc)
    return scipy.special.xlogy(j, mu) - mu - scipy.special.gammaln(j + 1.0)


@adjoint(scipy.stats.poisson.logpmf)
def poisson_logpmf(dy, y, k, mu, loc=0):
    """xlogy(k, mu) - mu - gammaln(k + 1)."""
    counts = k if is_number(loc, 0) else k - loc
    dmu = unbroadcast(dy * (ratio_or_zero(counts, mu) - 1.0), mu)


@adjoint(scipy.stats.poisson.pmf)
def poisson_pmf(dy, y, k, mu, loc=0):
    counts = k if is_number(loc, 0) else k - loc
    dmu = unbroadcast(dy * y * (ratio_or_zero(counts, mu) - 1.0), mu)


@adjoint(scipy.stats.poisson.cdf)
def poisson_cdf(dy, y, k, mu, loc=0):
    dmu = unbroadcast(-dy * np.exp(poisson_log_mass_at_floor(k, mu, loc)), mu)


@adjoint(scipy.stats.poisson.sf)
def poisson_sf(dy, y, k, mu, loc=0):
    dmu = unbroadcast(dy * np.exp(poisson_log_mass_at_floor(k, mu, loc)), mu)


@adjoint(scipy.stats.poisson.logcdf)
def poisson_logcdf(dy, y, k, mu, loc=0):
    dmu = unbroadcast(-dy * np.exp(poisson_log_mass_at_floor(k, mu, loc) - y), mu)


@adjoint(scipy.stats.poisson.logsf)
def poisson_logsf(dy, y, k, mu, loc=0):
    dmu = unbroadcast(dy * np.exp(poisson_log_mass_at_floor(k, mu, loc) - y), mu)


for _method in (scipy.stats.poisson.logpmf, scipy.stats.poisson.pmf, scipy.stats.poisson.cdf,
                scipy.stats.poisson.sf, scipy.stats.poisson.logcdf, scipy.stats.poisson.logsf):
    nodiff(_method, "k", "loc")


# --- dirichlet --------------------------------------------------------------------------


def dirichlet_point(x, alpha):
    """The point scipy reads: x, its components along the first axis, completed
    with 1 - sum(x) where the last component was left out."""
    if np.shape(x)[0] == np.shape(alpha)[0]:
        return x
    return np.concatenate([x, 1.0 - np.sum(x, axis=0, keepdims=True)], axis=0)


def along_components(alpha, x):
    """alpha shaped to broadcast against x, whose first axis holds the components."""
    return np.reshape(alpha, np.shape(alpha) + (1,) * (np.ndim(x) - 1))


def dirichlet_point_gradient(g, x, alpha):
    """d logpdf / dx for the x passed: (alpha - 1) / x, less the left-out
    component's share where x leaves it out."""
    full = dirichlet_point(x, alpha)
    slope = ratio_or_zero(along_components(alpha, full) - 1.0, full) * g
    if np.shape(x)[0] == np.shape(alpha)[0]:
        return slope
    return slope[:-1] - slope[-1:]


def dirichlet_alpha_gradient(g, x, alpha):
    """d logpdf / dalpha, summed over the points: digamma(sum alpha) - digamma(alpha) + log x."""
    full = dirichlet_point(x, alpha)
    per_point = np.reshape(np.log(full) * g, (np.shape(full)[0], -1))
    return (np.sum(per_point, axis=1) + np.sum(g) * (
        scipy.special.digamma(np.sum(alpha)) - scipy.special.digamma(alpha)))


@adjoint(scipy.stats.dirichlet.logpdf)
def dirichlet_logpdf(dy, y, x, alpha):
    """x's gradient is the density's partial derivatives; only their part along
    the simplex is seen by a change that keeps sum(x) = 1, as scipy requires."""
    dx = dirichlet_point_gradient(dy, x, alpha)
    dalpha = dirichlet_alpha_gradient(dy, x, alpha)


@adjoint(scipy.stats.dirichlet.pdf)
def dirichlet_pdf(dy, y, x, alpha):
    dx = dirichlet_point_gradient(dy * y, x, alpha)
    dalpha = dirichlet_alpha_gradient(dy * y, x, alpha)


# --- multivariate_normal ----------------------------------------------------------------


def dimension(mean, cov):
    """The dimension scipy infers: the mean's size, else the covariance's side."""
    if mean is not None:
        return np.size(mean)
    return np.shape(cov)[0] if np.ndim(cov) == 2 else 1


def full_covariance(cov, d):
    """The d x d matrix scipy uses: a number times the identity, a diagonal,
    or the symmetric matrix of cov's lower triangle (scipy reads only that)."""
    if np.ndim(cov) == 0:
        return cov * np.eye(d)
    if np.ndim(cov) == 1:
        return np.diag(cov)
    if d == 1:
        return cov
    return np.tril(cov) + np.transpose(np.tril(cov, -1))


def covariance_gradient(g, cov, d):
    """The gradient for the cov passed, from g, the gradient of the full
    symmetric matrix: the trace for a number, the diagonal for a vector, and
    the lower triangle (each entry off the diagonal standing for its mirror)."""
    if np.ndim(cov) == 0:
        return np.trace(g)
    if np.ndim(cov) == 1:
        return np.diagonal(g)
    if d == 1:
        return g
    return triangle_read(g, "L")


def points(x, d):
    """x as scipy reads it: one point per row of a (n, d) matrix."""
    if d == 1 and np.shape(x)[-1:] != (1,):
        return np.reshape(x, (-1, 1))
    return np.reshape(x, (-1, d))


def centred(x, mean, d):
    rows = points(x, d)
    return rows if mean is None else rows - np.reshape(mean, (d,))


def check_covariance(cov):
    if isinstance(cov, scipy.stats.Covariance):
        raise NotImplementedError("the rule for scipy.stats.multivariate_normal covers a "
                                  "covariance given as an array, not a Covariance object")


def normal_point_gradient(g, x, mean, cov):
    """g times d logpdf / dx = -cov^-1 (x - mean), one row per point."""
    d = dimension(mean, cov)
    solved = np.transpose(np.linalg.solve(full_covariance(cov, d),
                                          np.transpose(centred(x, mean, d))))
    return -np.reshape(g, (-1, 1)) * solved


def normal_covariance_gradient(g, x, mean, cov):
    """g times d logpdf / dcov = (P r r^T P - P) / 2 with P = cov^-1, summed over the points."""
    d = dimension(mean, cov)
    full = full_covariance(cov, d)
    solved = np.transpose(np.linalg.solve(full, np.transpose(centred(x, mean, d))))
    weights = np.reshape(g, (-1, 1))
    outer = np.transpose(solved) @ (weights * solved)
    return covariance_gradient(0.5 * (outer - np.sum(g) * np.linalg.inv(full)), cov, d)


@adjoint(scipy.stats.multivariate_normal.logpdf)
def multivariate_normal_logpdf(dy, y, x, mean=None, cov=1, allow_singular=False):
    """With respect to the point, the mean and the covariance (as HIPS autograd).
    A singular covariance (allow_singular=True) has no derivative here: the
    rule solves with it, which raises LinAlgError."""
    check_covariance(cov)
    dx = np.reshape(normal_point_gradient(dy, x, mean, cov), np.shape(x))
    dmean = np.reshape(-np.sum(normal_point_gradient(dy, x, mean, cov), axis=0), np.shape(mean))
    dcov = normal_covariance_gradient(dy, x, mean, cov)


@adjoint(scipy.stats.multivariate_normal.pdf)
def multivariate_normal_pdf(dy, y, x, mean=None, cov=1, allow_singular=False):
    check_covariance(cov)
    dx = np.reshape(normal_point_gradient(dy * y, x, mean, cov), np.shape(x))
    dmean = np.reshape(-np.sum(normal_point_gradient(dy * y, x, mean, cov), axis=0),
                       np.shape(mean))
    dcov = normal_covariance_gradient(dy * y, x, mean, cov)


@adjoint(scipy.stats.multivariate_normal.entropy)
def multivariate_normal_entropy(dy, y, mean=None, cov=1):
    """log det(2 pi e cov) / 2: the mean does not enter."""
    check_covariance(cov)
    d = dimension(mean, cov)
    dmean = 0
    dcov = covariance_gradient(0.5 * dy * np.linalg.inv(full_covariance(cov, d)), cov, d)
