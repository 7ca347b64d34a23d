"""Affine, batch norm (train mode) and ReLU, written as course layers are:
each forward returns (out, cache), and batch norm updates the running
statistics kept in a bn_param dict it is handed."""

import numpy as np


def affine_forward(x, w, b):
    out = x.reshape(x.shape[0], -1).dot(w) + b
    return out, (x, w, b)


def batchnorm_forward(x, gamma, beta, bn_param):
    eps = bn_param.get('eps', 1e-5)
    momentum = bn_param.get('momentum', 0.9)
    running_mean = bn_param.get('running_mean', np.zeros(x.shape[1]))
    running_var = bn_param.get('running_var', np.ones(x.shape[1]))

    sample_mean = x.mean(axis=0)
    sample_var = x.var(axis=0)
    x_hat = (x - sample_mean) / np.sqrt(sample_var + eps)
    out = gamma * x_hat + beta
    running_mean = momentum * running_mean + (1 - momentum) * sample_mean
    running_var = momentum * running_var + (1 - momentum) * sample_var

    bn_param['running_mean'] = running_mean
    bn_param['running_var'] = running_var
    return out, (x_hat, gamma, sample_var, eps)


def loss(params, X, y, bn_param):
    h, _ = affine_forward(X, params['W1'], params['b1'])
    h, _ = batchnorm_forward(h, params['gamma1'], params['beta1'], bn_param)
    h = np.maximum(h, 0)
    scores, _ = affine_forward(h, params['W2'], params['b2'])
    return np.mean((scores[:, 0] - y) ** 2)


def example(seed):
    rs = np.random.RandomState(seed)
    D, H, N = 3, 5, 8
    params = {'W1': 0.5 * rs.randn(D, H), 'b1': np.zeros(H),
              'gamma1': np.ones(H) + 0.1 * rs.randn(H), 'beta1': 0.1 * rs.randn(H),
              'W2': 0.5 * rs.randn(H, 1), 'b2': np.zeros(1)}
    X = rs.randn(N, D)
    return params, X, X[:, 0] - X[:, 1] ** 2, {'mode': 'train'}
