"""Graph neural network for node regression: messages computed per edge,
summed into their destination nodes with np.add.at (nodes receive several
messages), degree normalisation with np.bincount, two rounds of message
passing and a mean-squared error."""

import numpy as np


def message_passing(h, src, dst, W_msg, W_self, num_nodes):
    messages = np.tanh(h[src] @ W_msg)
    agg = np.zeros((num_nodes, messages.shape[1]))
    np.add.at(agg, dst, messages)
    degree = np.maximum(np.bincount(dst, minlength=num_nodes), 1)[:, None]
    return np.tanh(h @ W_self + agg / degree)


def loss(params, features, src, dst, targets):
    h = features
    for W_msg, W_self in params['layers']:
        h = message_passing(h, src, dst, W_msg, W_self, len(features))
    preds = h @ params['readout']
    return np.mean((preds[:, 0] - targets) ** 2)


def example(seed):
    rs = np.random.RandomState(seed)
    n, d, hdim, e = 6, 3, 4, 12
    src = rs.randint(0, n, size=e)
    dst = rs.randint(0, n, size=e)
    features = rs.randn(n, d)
    params = {'layers': [(0.5 * rs.randn(d, hdim), 0.5 * rs.randn(d, hdim)),
                         (0.5 * rs.randn(hdim, hdim), 0.5 * rs.randn(hdim, hdim))],
              'readout': 0.5 * rs.randn(hdim, 1)}
    targets = rs.randn(n)
    return params, features, src, dst, targets
