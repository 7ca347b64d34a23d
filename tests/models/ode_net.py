"""ODE net: an MLP gives the dynamics, integrated with a hand-written
fourth-order Runge-Kutta loop; the loss compares the trajectory with noisy
observations of a spiral."""

import numpy as np

TIMES = np.linspace(0.0, 1.0, 9)


def init_nn_params(scale, layer_sizes, rs):
    return [(scale * rs.randn(m, n), scale * rs.randn(n))
            for m, n in zip(layer_sizes[:-1], layer_sizes[1:])]


def nn_predict(params, inputs, nonlinearity=np.tanh):
    for W, b in params:
        outputs = np.dot(inputs, W) + b
        inputs = nonlinearity(outputs)
    return outputs


def dynamics(y, t, params):
    return nn_predict(params, np.concatenate([y, [t]]))


def rk4(f, y0, ts, *args):
    ys = [y0]
    y = y0
    for t0, t1 in zip(ts[:-1], ts[1:]):
        h = t1 - t0
        k1 = f(y, t0, *args)
        k2 = f(y + h * k1 / 2, t0 + h / 2, *args)
        k3 = f(y + h * k2 / 2, t0 + h / 2, *args)
        k4 = f(y + h * k3, t1, *args)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        ys.append(y)
    return np.array(ys)


def loss(params, y0, observations):
    trajectory = rk4(dynamics, y0, TIMES, params)
    return np.mean(np.sum((trajectory - observations) ** 2, axis=1))


def example(seed):
    rs = np.random.RandomState(seed)
    params = init_nn_params(0.5, [3, 6, 2], rs)
    y0 = np.array([2.0, 0.0])
    true_A = np.array([[-0.1, 2.0], [-2.0, -0.1]])
    observations = np.array([y0 @ np.linalg.matrix_power(np.eye(2) + 0.125 * true_A.T, k)
                             for k in range(len(TIMES))]) + 0.05 * rs.randn(len(TIMES), 2)
    return params, y0, observations
