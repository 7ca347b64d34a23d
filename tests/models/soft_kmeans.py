"""Soft k-means: responsibilities are a softmax of negative squared
distances at a learned temperature; the loss is the free energy (expected
distortion minus temperature times the assignment entropy)."""

import numpy as np


def pairwise_sq_dists(X, centroids):
    return np.sum((X[:, None, :] - centroids[None, :, :]) ** 2, axis=-1)


def soft_assignments(X, centroids, temperature):
    logits = -pairwise_sq_dists(X, centroids) / temperature
    logits -= logits.max(axis=1, keepdims=True)
    r = np.exp(logits)
    r /= r.sum(axis=1, keepdims=True)
    return r


def loss(centroids, log_temperature, X):
    temperature = np.exp(log_temperature)
    d = pairwise_sq_dists(X, centroids)
    r = soft_assignments(X, centroids, temperature)
    entropy = -np.sum(r * np.log(r + 1e-12))
    return (np.sum(r * d) - temperature * entropy) / len(X)


def example(seed):
    rng = np.random.default_rng(seed)
    X = np.concatenate([rng.normal(-2, 0.5, (6, 2)), rng.normal(2, 0.5, (6, 2))])
    centroids = rng.normal(0, 1, (3, 2))
    return centroids, 0.2 * seed, X
