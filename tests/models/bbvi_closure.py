"""Black-box VI written as autograd's examples write it: a factory returns
the objective as a closure over its own RandomState, and the objective takes
the optimiser's iteration number `t` (unused) as its second argument. The
gradient draws from the closure's generator, so it can be used in this
process but not saved (the module could not name that generator)."""

import numpy as np
import numpy.random as npr

UNSAVEABLE = True


def black_box_variational_inference(logprob, D, num_samples):
    def unpack_params(params):
        mean, log_std = params[:D], params[D:]
        return mean, log_std

    def gaussian_entropy(log_std):
        return 0.5 * D * (1.0 + np.log(2 * np.pi)) + np.sum(log_std)

    rs = npr.RandomState(0)

    def variational_objective(params, t):
        mean, log_std = unpack_params(params)
        samples = rs.randn(num_samples, D) * np.exp(log_std) + mean
        lower_bound = gaussian_entropy(log_std) + np.mean(logprob(samples, t))
        return -lower_bound

    return variational_objective, rs


def log_density(x, t):
    """Neal's funnel in two dimensions."""
    mu, log_sigma = x[:, 0], x[:, 1]
    sigma_density = -0.5 * log_sigma ** 2 / 1.35 ** 2
    mu_density = -0.5 * mu ** 2 * np.exp(-2 * log_sigma) - log_sigma
    return sigma_density + mu_density


loss, _rs = black_box_variational_inference(log_density, 2, num_samples=6)


def reset():
    """Rewind the closure's generator (called before every evaluation)."""
    _rs.seed(0)


def example(seed):
    rs = np.random.RandomState(seed)
    return np.concatenate([0.3 * rs.randn(2), -1.0 + 0.1 * rs.randn(2)]), seed
