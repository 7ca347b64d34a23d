"""Gaussian-process regression: negative log marginal likelihood of an RBF
kernel with per-dimension lengthscales, through a Cholesky factor and two
triangular solves. Kernel parameters live in one flat vector."""

import numpy as np


def unpack_kernel_params(params):
    mean = params[0]
    noise_scale = np.exp(params[1]) + 0.0001
    cov_params = params[2:]
    return mean, cov_params, noise_scale


def rbf_covariance(kernel_params, x, xp):
    output_scale = np.exp(kernel_params[0])
    lengthscales = np.exp(kernel_params[1:])
    diffs = np.expand_dims(x / lengthscales, 1) - np.expand_dims(xp / lengthscales, 0)
    return output_scale * np.exp(-0.5 * np.sum(diffs ** 2, axis=2))


def loss(params, x, y):
    mean, cov_params, noise_scale = unpack_kernel_params(params)
    cov_y_y = rbf_covariance(cov_params, x, x) + noise_scale * np.eye(len(y))
    L = np.linalg.cholesky(cov_y_y)
    residual = y - mean
    alpha = np.linalg.solve(L.T, np.linalg.solve(L, residual))
    log_det = 2.0 * np.sum(np.log(np.diag(L)))
    return 0.5 * residual @ alpha + 0.5 * log_det + 0.5 * len(y) * np.log(2 * np.pi)


def example(seed):
    rs = np.random.RandomState(seed)
    D = 2
    x = rs.uniform(-2, 2, size=(9, D))
    y = np.cos(x[:, 0]) + 0.5 * x[:, 1] + 0.1 * rs.randn(9)
    params = np.concatenate([[0.1], [np.log(0.1)], 0.2 * rs.randn(D + 1)])
    return params, x, y
