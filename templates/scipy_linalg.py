"""scipy.linalg: the matrix square root, triangular, banded, Sylvester and
Cholesky solves, and the Cholesky factorization.

Loaded by yota_src.rules once the user's code has imported scipy.linalg.
Each solve's gradient is another solve with the transposed system; a
matrix's gradient lands only on the entries the routine reads (a triangle,
a band). Two-dimensional arrays; `overwrite_*=True`, which lets SciPy write
into an argument, is refused.
"""

import numpy as np
import scipy.linalg

from yota_src.rules import adjoint

from .contractions import swap_last
from .linalg import cholesky_gradient


def plain_matrices(function, *arrays, overwrite=False):
    if overwrite:
        raise NotImplementedError(f"{function} with overwrite_a/overwrite_b=True may write "
                                  "into its argument; leave them False")
    if any(np.ndim(a) > 2 for a in arrays):
        raise NotImplementedError(f"the rule for {function} covers matrices and vectors, "
                                  "not stacks of them")


def outer_product(g, x):
    """g x^T, for the vectors or matrices of a solve's right-hand side."""
    return np.outer(g, x) if np.ndim(x) == 1 else g @ swap_last(x)


@adjoint(scipy.linalg.sqrtm)
def sqrtm(dy, y, A, disp=None, blocksize=None):
    """y y = A, so dA solves the transposed Sylvester equation y^T dA + dA y^T = dy."""
    if disp is False:
        raise NotImplementedError("the rule for scipy.linalg.sqrtm covers the default "
                                  "disp=True (one result, not an error estimate)")
    dA = scipy.linalg.solve_sylvester(swap_last(y), swap_last(y), dy)


@adjoint(scipy.linalg.solve_sylvester)
def solve_sylvester(dy, y, a, b, q):
    """a y + y b = q."""
    dq = scipy.linalg.solve_sylvester(swap_last(a), swap_last(b), dy)
    da = -(dq @ swap_last(y))
    db = -(swap_last(y) @ dq)


def transposes(trans):
    """Does `trans` (0/'N', 1/'T', 2/'C') solve with the transposed matrix?"""
    return trans in (1, 2, "T", "C", "t", "c")


def triangular_solve(a, b, transposed, lower, unit_diagonal):
    """scipy.linalg.solve_triangular, written with the keywords it needs."""
    keywords = {}
    if transposed:
        keywords["trans"] = "T"
    if lower:
        keywords["lower"] = True
    if unit_diagonal:
        keywords["unit_diagonal"] = True
    return scipy.linalg.solve_triangular(a, b, **keywords)


def triangle(g, lower, unit_diagonal):
    """The entries of `g` on the triangle read (the diagonal too, unless it is
    taken as ones)."""
    if lower:
        return np.tril(g, -1) if unit_diagonal else np.tril(g)
    return np.triu(g, 1) if unit_diagonal else np.triu(g)


@adjoint(scipy.linalg.solve_triangular)
def solve_triangular(dy, y, a, b, trans=0, lower=False, unit_diagonal=False,
                     overwrite_b=False, check_finite=True):
    """op(a) y = b, op(a) = a or a^T, reading one triangle of a."""
    plain_matrices("scipy.linalg.solve_triangular", a, b, overwrite=overwrite_b)
    transposed = transposes(trans)
    db = triangular_solve(a, dy, not transposed, lower, unit_diagonal)
    da = triangle(-(outer_product(y, db) if transposed else outer_product(db, y)), lower,
                  unit_diagonal)


@adjoint(scipy.linalg.cho_solve)
def cho_solve(dy, y, c_and_lower, b, overwrite_b=False, check_finite=True):
    """(c c^T) y = b with c lower triangular (c^T c, upper, where c_and_lower[1]
    is false), reading c's triangle only."""
    plain_matrices("scipy.linalg.cho_solve", c_and_lower[0], b, overwrite=overwrite_b)
    c, lower = c_and_lower
    db = scipy.linalg.cho_solve(c_and_lower, dy)
    product = outer_product(db, y)
    symmetric = -(product + swap_last(product))
    dc = np.tril(symmetric @ np.tril(c)) if lower else np.triu(np.triu(c) @ symmetric)
    dc_and_lower = (dc, None)


@adjoint(scipy.linalg.cholesky)
def cholesky(dy, y, a, lower=False, overwrite_a=False, check_finite=True):
    """The upper factor by default (a = U^T U, read from the upper triangle)."""
    plain_matrices("scipy.linalg.cholesky", a, overwrite=overwrite_a)
    da = cholesky_gradient(dy, y, a, not lower)


def shifted(v, offset):
    """v moved `offset` places along its first axis (v[j - offset] at j), zeros
    where nothing moved in."""
    n = np.shape(v)[0]
    if offset == 0:
        return v
    zeros = np.zeros((abs(offset),) + np.shape(v)[1:])
    if offset > 0:
        return np.concatenate([zeros, v[: n - offset]])
    return np.concatenate([v[-offset:], zeros])


def transposed_band(ab, lower, upper):
    """The band storage of the transposed matrix: its diagonal at offset d is
    the matrix's at -d, so row (lower - d) is ab's row (upper + d) moved by d."""
    return np.stack([shifted(ab[upper + d], d) for d in range(lower, -upper - 1, -1)])


@adjoint(scipy.linalg.solve_banded)
def solve_banded(dy, y, l_and_u, ab, b, overwrite_ab=False, overwrite_b=False,
                 check_finite=True):
    """A y = b with A stored by diagonals, ab[u + i - j, j] = A[i, j]. The
    gradient of A is -db y^T, of which only the band is read: the diagonal at
    offset d is -db[j - d] y[j] at column j."""
    plain_matrices("scipy.linalg.solve_banded", ab, b, overwrite=overwrite_ab or overwrite_b)
    lower, upper = l_and_u
    db = scipy.linalg.solve_banded((upper, lower), transposed_band(ab, lower, upper), dy)
    products = [shifted(db, d) * y for d in range(upper, -lower - 1, -1)]
    dab = -np.stack(products if np.ndim(y) == 1 else [np.sum(p, axis=1) for p in products])
