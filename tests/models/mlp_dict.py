"""MLP whose parameters are nested dicts keyed by layer name ('layer 1',
'layer-2', 'output'); the forward pass walks the layers in sorted order,
the weight decay picks the weight matrices by key."""

import numpy as np


def forward(params, x):
    names = sorted(k for k in params if k.startswith('layer'))
    for name in names:
        x = np.tanh(x @ params[name]['W'] + params[name]['b'])
    return x @ params['output']['W'] + params['output']['b']


def weight_decay(params):
    return sum(np.sum(p['W'] ** 2) for p in params.values())


def loss(params, x, y):
    err = forward(params, x)[:, 0] - y
    return np.mean(err ** 2) + 1e-3 * weight_decay(params)


def example(seed):
    rs = np.random.RandomState(seed)
    params = {'output': {'W': 0.5 * rs.randn(4, 1), 'b': np.zeros(1)},
              'layer 1': {'W': 0.5 * rs.randn(2, 5), 'b': 0.1 * rs.randn(5)},
              'layer-2': {'W': 0.5 * rs.randn(5, 4), 'b': 0.1 * rs.randn(4)}}
    x = rs.randn(9, 2)
    return params, x, x[:, 0] * x[:, 1]
