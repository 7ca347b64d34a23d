"""Collaborative filtering by matrix factorisation: user and item factors
plus biases gathered by integer index arrays (users and items repeat), a
squared error on the observed ratings and L2 regularisation."""

import numpy as np


def predict(params, users, items):
    U, V, user_bias, item_bias, global_bias = params
    return np.sum(U[users] * V[items], axis=1) + user_bias[users] + item_bias[items] + global_bias


def loss(params, users, items, ratings, reg):
    U, V = params[0], params[1]
    err = ratings - predict(params, users, items)
    return 0.5 * np.mean(err ** 2) + 0.5 * reg * (np.sum(U ** 2) + np.sum(V ** 2))


def example(seed):
    rs = np.random.RandomState(seed)
    n_users, n_items, k, n_obs = 5, 4, 2, 14
    users = rs.randint(0, n_users, size=n_obs)
    items = rs.randint(0, n_items, size=n_obs)
    ratings = rs.uniform(1, 5, size=n_obs)
    params = [0.3 * rs.randn(n_users, k), 0.3 * rs.randn(n_items, k),
              np.zeros(n_users), np.zeros(n_items), 3.0]
    return params, users, items, ratings, 0.05
