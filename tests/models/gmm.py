"""Gaussian mixture model: negative log-likelihood of full-covariance
components parameterised by unconstrained lower-triangular factors (log
diagonal), mixed through log proportions and a logsumexp over components."""

import numpy as np


def logsumexp(a, axis=None):
    a_max = np.max(a, axis=axis, keepdims=True)
    return np.squeeze(a_max, axis=axis) + np.log(np.sum(np.exp(a - a_max), axis=axis))


def unpack_params(params):
    normalized_log_proportions = params['log proportions'] - logsumexp(params['log proportions'])
    return normalized_log_proportions, params['means'], params['lower triangles']


def cholesky_factor(raw):
    return np.tril(raw, -1) + np.diag(np.exp(np.diag(raw)))


def mvn_logpdf(X, mean, chol):
    D = X.shape[1]
    solved = np.linalg.solve(chol, (X - mean).T)
    log_det = np.sum(np.log(np.diag(chol)))
    return -0.5 * np.sum(solved ** 2, axis=0) - log_det - 0.5 * D * np.log(2 * np.pi)


def gmm_log_likelihood(params, data):
    cluster_lls = []
    for log_proportion, mean, raw in zip(*unpack_params(params)):
        cluster_lls.append(log_proportion + mvn_logpdf(data, mean, cholesky_factor(raw)))
    return np.sum(logsumexp(np.vstack(cluster_lls), axis=0))


def loss(params, data):
    return -gmm_log_likelihood(params, data) / len(data)


def example(seed):
    rs = np.random.RandomState(seed)
    K, D = 3, 2
    centres = np.array([[-2.0, 0.0], [2.0, 0.5], [0.0, 2.0]])
    data = centres[rs.randint(0, K, size=15)] + 0.6 * rs.randn(15, D)
    params = {'log proportions': 0.1 * rs.randn(K),
              'means': centres + 0.3 * rs.randn(K, D),
              'lower triangles': 0.2 * rs.randn(K, D, D)}
    return params, data
