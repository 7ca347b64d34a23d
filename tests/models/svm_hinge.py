"""Multiclass SVM loss, vectorised as in course code: margins against the
correct class's score, the correct class's own margin zeroed by an indexed
assignment into the margins array, and an L2 penalty."""

import numpy as np


def loss(W, X, y, reg):
    num_train = X.shape[0]
    scores = X.dot(W)
    correct_class_scores = scores[np.arange(num_train), y]
    margins = np.maximum(0, scores - correct_class_scores[:, np.newaxis] + 1.0)
    margins[np.arange(num_train), y] = 0
    data_loss = np.sum(margins) / num_train
    return data_loss + reg * np.sum(W * W)


def example(seed):
    rs = np.random.RandomState(seed)
    X = np.hstack([rs.randn(10, 4), np.ones((10, 1))])
    y = rs.randint(0, 3, size=10)
    return 0.1 * rs.randn(5, 3), X, y, 0.05
