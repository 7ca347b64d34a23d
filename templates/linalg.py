"""Matrix products."""

import operator

import numpy as np

from yota_src.rules import adjoint

from .helpers import matmul_left, matmul_right, unbroadcast


@adjoint(operator.matmul, np.matmul)
def matmul(dy, y, a, b):
    da = unbroadcast(matmul_left(dy, a, b), a)
    db = unbroadcast(matmul_right(dy, a, b), b)


@adjoint(np.dot)
def dot(dy, y, a, b):
    """As matmul for vectors and matrices; a scalar operand scales the other."""
    if np.ndim(a) > 2 or np.ndim(b) > 2:
        raise NotImplementedError("the rule for np.dot covers arrays of at most 2 dimensions")
    da = unbroadcast(dy * b, a) if np.ndim(a) == 0 or np.ndim(b) == 0 else matmul_left(dy, a, b)
    db = unbroadcast(dy * a, b) if np.ndim(a) == 0 or np.ndim(b) == 0 else matmul_right(dy, a, b)


@adjoint(np.outer)
def outer(dy, y, a, b):
    da = np.reshape(dy @ np.ravel(b), np.shape(a))
    db = np.reshape(np.ravel(a) @ dy, np.shape(b))
