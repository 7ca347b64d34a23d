"""Linear algebra rules added for issue 8 (np.linalg.svd, eig, eigvals,
matrix_power, the spectral and nuclear norms, np.cross, einsum's diagonals)
against central finite differences, and their refusals where the derivative
does not exist."""

import warnings

import numpy as np
import pytest
from helpers_rule_checks import check, normal
from hypothesis import given, settings
from hypothesis import strategies as st

import yota_src as ys
from yota_src.errors import NoDiffRuleError

SETTINGS = settings(max_examples=20, deadline=None)


def refused(fn, *arrays, match):
    with pytest.raises(NoDiffRuleError, match=match):
        ys.grad(lambda *arrays: np.sum(fn(*arrays)), *arrays)


MATRICES = [(3, 3), (4, 2), (2, 5), (2, 4, 3)]


# --- np.linalg.svd -----------------------------------------------------------------


@pytest.mark.parametrize("shape", MATRICES, ids=str)
def test_singular_values(shape):
    check(lambda a: np.linalg.svd(a, compute_uv=False), normal(shape))


@pytest.mark.parametrize("shape", MATRICES, ids=str)
def test_singular_values_of_the_full_factorization(shape):
    check(lambda a: np.linalg.svd(a)[1], normal(shape))


@pytest.mark.parametrize("part", [0, 1, 2, "all"])
@pytest.mark.parametrize("shape", MATRICES, ids=str)
def test_singular_vectors(shape, part):
    def factors(a):
        u, s, vt = np.linalg.svd(a, full_matrices=False)
        pieces = {0: u, 1: s, 2: vt}
        if part != "all":
            return pieces[part]
        return np.concatenate([np.ravel(u), np.ravel(s), np.ravel(vt)])

    check(factors, normal(shape))


def test_singular_vectors_of_a_square_matrix_with_full_matrices():
    check(lambda a: np.linalg.svd(a).U, normal((3, 3)))


def test_hermitian_svd_reads_the_lower_triangle():
    check(lambda a: np.linalg.svd(a, hermitian=True)[0], normal((3, 3)) + 4 * np.eye(3))
    check(lambda a: np.linalg.svd(a, compute_uv=False, hermitian=True), normal((3, 3)))


def test_full_singular_vectors_of_a_matrix_that_is_not_square_are_refused():
    refused(lambda a: np.linalg.svd(a)[0], normal((4, 3)), match="full_matrices=False")


def test_singular_vectors_at_repeated_singular_values_are_refused():
    refused(lambda a: np.linalg.svd(a)[2], np.diag([1.0, 1.0, 2.0]),
            match="needs distinct singular values")


def test_singular_vectors_check_their_data_when_the_gradient_runs():
    def top_vector(a):
        return np.sum(np.linalg.svd(a)[0][:, 0] * np.arange(3.0))

    df = ys.simplegrad(top_vector, normal((3, 3)))
    with pytest.raises(ValueError, match="goes the other way"):
        df(np.eye(3))


# --- np.linalg.eig and eigvals -----------------------------------------------------


def with_real_eigenvalues(n, seed=0):
    """A matrix that is not symmetric, with real distinct eigenvalues."""
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(n, n)) + 2 * np.eye(n)
    return vectors @ np.diag(np.arange(1.0, n + 1) * 1.5) @ np.linalg.inv(vectors)


# NumPy 2.5 made np.linalg.eig complex whatever the eigenvalues; complex values
# on the gradient path are refused, so there only the refusal is tested.
EIG_IS_COMPLEX = np.linalg.eig(np.eye(2))[0].dtype.kind == "c"
real_eig = pytest.mark.skipif(EIG_IS_COMPLEX, reason="this NumPy's np.linalg.eig is always "
                              "complex (NumPy >= 2.5), which is refused on the gradient path")


@pytest.mark.skipif(not EIG_IS_COMPLEX, reason="this NumPy's np.linalg.eig is real where it can")
def test_eig_always_complex_is_refused_naming_eigh():
    refused(lambda a: np.sum(np.real(np.linalg.eig(a)[0])), with_real_eigenvalues(3),
            match="complex result")
    with pytest.raises(ys.errors.NoDiffRuleError, match="eigh"):
        ys.grad(lambda a: np.sum(np.real(np.linalg.eigvals(a))), with_real_eigenvalues(3))


@real_eig
@pytest.mark.parametrize("part", ["eigenvalues", "eigenvectors", "both"])
def test_eig(part):
    def decomposed(a):
        w, v = np.linalg.eig(a)
        return {"eigenvalues": w, "eigenvectors": v, "both": v * w}[part]

    check(decomposed, with_real_eigenvalues(4))


@real_eig
def test_eig_of_a_stack():
    check(lambda a: np.linalg.eig(a).eigenvectors,
          np.stack([with_real_eigenvalues(3), with_real_eigenvalues(3, seed=1)]))


@real_eig
def test_eigvals():
    check(np.linalg.eigvals, with_real_eigenvalues(4))


def test_complex_eigenvalues_are_refused():
    refused(lambda a: np.real(np.linalg.eig(a)[0]), np.array([[0.0, 1.0], [-1.0, 0.0]]),
            match="complex result")


@real_eig
def test_repeated_eigenvalues_are_refused():
    refused(lambda a: np.linalg.eig(a)[0], np.array([[1.0, 1.0], [0.0, 1.0]]),
            match="needs distinct eigenvalues")


@real_eig
def test_eig_checks_its_data_when_the_gradient_runs():
    def weighted_eigenvalues(a):
        return np.sum(np.linalg.eigvals(a) * np.arange(3.0))

    df = ys.simplegrad(weighted_eigenvalues, with_real_eigenvalues(3))
    rotation = np.array([[0.0, 1.0, 0.0], [-1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    with pytest.raises(ValueError, match="goes the other way"):
        df(rotation)


# --- np.linalg.eigh at repeated eigenvalues ----------------------------------------


def symmetric(n, seed=0):
    b = normal((n, n), seed)
    return b + b.T


def test_eigh_eigenvectors_at_repeated_eigenvalues_are_refused():
    refused(lambda a: np.linalg.eigh(a)[1][:, 0], np.diag([1.0, 1.0, 2.0]),
            match="eigenvectors needs distinct eigenvalues")
    refused(lambda a: np.linalg.eigh(a).eigenvectors ** 2, np.eye(3),
            match="eigenvectors needs distinct eigenvalues")


def test_eigh_eigenvalues_at_repeated_eigenvalues_are_allowed():
    """A symmetric function of the eigenvalues (here their sum of squares) is
    smooth through a repeated one: the rule gives its gradient, V diag(dw) V^T."""
    a = np.diag([1.0, 1.0, 2.0])
    check(lambda a: np.sum(np.linalg.eigh(a)[0] ** 2), a)
    _, g = ys.grad(lambda a: np.sum(np.linalg.eigh(a)[0] ** 2), a)
    assert np.allclose(g[0], np.diag([2.0, 2.0, 4.0]))


def test_eigh_eigenvectors_check_their_data_when_the_gradient_runs():
    def top_vector(a):
        return np.sum(np.linalg.eigh(a)[1][:, -1] ** 3)

    df = ys.simplegrad(top_vector, symmetric(3))
    assert "ControlFlowChanged" in df.source
    with pytest.raises(ValueError, match="goes the other way"):
        df(np.diag([1.0, 1.0, 2.0]))
    df(symmetric(3, seed=1))  # distinct eigenvalues: the gradient runs


@SETTINGS
@given(seed=st.integers(0, 1000), batch=st.sampled_from([(), (2,)]))
@pytest.mark.slow
def test_eigh_eigenvectors_with_distinct_eigenvalues(seed, batch):
    """Signs fixed by squaring: an eigenvector is defined up to its sign."""
    b = normal(batch + (3, 3), seed)
    check(lambda a: np.linalg.eigh(a)[1] ** 2, b + np.swapaxes(b, -1, -2), rtol=1e-4, atol=1e-6)


# --- np.linalg.matrix_power --------------------------------------------------------


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, -1, -3])
def test_matrix_power(n):
    check(lambda a: np.linalg.matrix_power(a, n), normal((3, 3)) + 3 * np.eye(3))


def test_matrix_power_of_a_stack():
    check(lambda a: np.linalg.matrix_power(a, 3), normal((2, 3, 3)))


# --- np.linalg.norm of matrices ----------------------------------------------------


@pytest.mark.parametrize("ord", [2, -2, "nuc"])
@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 5)], ids=str)
def test_singular_value_norms(shape, ord):
    check(lambda a: np.linalg.norm(a, ord), normal(shape))


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", [(2, 0), (0, 2), (-2, -1)], ids=str)
@pytest.mark.parametrize("ord", [2, -2, "nuc"])
def test_singular_value_norms_over_axes(ord, axis, keepdims):
    check(lambda a: np.linalg.norm(a, ord, axis=axis, keepdims=keepdims), normal((3, 2, 4)))


@pytest.mark.parametrize("ord, matrix, match", [
    (2, np.eye(2), "ord=2 is not differentiable where its singular value repeats"),
    (-2, np.diag([2.0, 0.0]), "repeats or is 0"),
    ("nuc", np.diag([1.0, 0.0]), "singular value 0"),
    (1, np.eye(2), "ord=1 is not provided"),
], ids=str)
def test_matrix_norms_refused(ord, matrix, match):
    refused(lambda a: np.linalg.norm(a, ord), matrix, match=match)


# --- np.cross ----------------------------------------------------------------------


def _crosses_2_vectors() -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            np.cross(np.ones(2), np.ones(2))
    except ValueError:  # NumPy 2.5 and later: 3-vectors only
        return False
    return True


CROSS_LENGTHS = [2, 3] if _crosses_2_vectors() else [3]


@pytest.mark.filterwarnings("ignore:Arrays of 2-dimensional vectors:DeprecationWarning")
@SETTINGS
@given(a_length=st.sampled_from(CROSS_LENGTHS), b_length=st.sampled_from(CROSS_LENGTHS),
       a_lead=st.sampled_from([(), (4,), (1,)]), b_lead=st.sampled_from([(), (4,)]),
       vectors_first=st.booleans())
def test_cross(a_length, b_length, a_lead, b_lead, vectors_first):
    """Vectors of 2 or 3, broadcast, along the last or the first axis."""
    a, b = normal(a_lead + (a_length,)), normal(b_lead + (b_length,), seed=1)
    if vectors_first:
        a, b = np.moveaxis(a, -1, 0), np.moveaxis(b, -1, 0)
        check(lambda a, b: np.cross(a, b, axisa=0, axisb=0, axisc=0), a, b)
    else:
        check(np.cross, a, b)


def test_cross_with_one_axis_for_all():
    check(lambda a, b: np.cross(a, b, axis=0), normal((3, 4)), normal((3, 1), seed=1))


def test_cross_with_a_list():
    check(lambda a, c: np.cross(a, [c, 1.0, 2.0]), normal(3), 0.5)


# --- np.einsum with a repeated index in one operand ---------------------------------


@pytest.mark.parametrize("subscripts, shapes", [
    ("ii->i", [(3, 3)]), ("ii", [(3, 3)]), ("ii->", [(3, 3)]), ("iij->j", [(2, 2, 3)]),
    ("iij->ij", [(2, 2, 3)]), ("ijij->ij", [(2, 3, 2, 3)]), ("iii->i", [(2, 2, 2)]),
    ("ii,i->i", [(3, 3), (3,)]), ("ij,kk->ij", [(2, 3), (4, 4)]), ("...ii->...i", [(2, 3, 3)]),
    ("jii->j", [(1, 3, 3)]),
], ids=lambda value: value if isinstance(value, str) else None)
def test_einsum_diagonals(subscripts, shapes):
    check(lambda *operands: np.einsum(subscripts, *operands),
          *(normal(shape, seed) for seed, shape in enumerate(shapes)))


def test_einsum_diagonal_in_the_interleaved_form():
    check(lambda a: np.einsum(a, [0, 0, 1], [1]), normal((2, 2, 3)))


def _rotated(values, seed=0):
    """A symmetric matrix with these eigenvalues: equal ones come back from
    LAPACK a few ulps apart, not equal."""
    q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(len(values),) * 2))
    return q @ np.diag(values) @ q.T


@pytest.mark.parametrize("f, a, match", [
    (lambda a: np.sum(np.linalg.eigh(a)[1][:, 0] ** 4), _rotated([1.0, 1.0, 3.0]),
     "eigenvectors needs distinct eigenvalues"),
    (lambda a: np.sum(np.linalg.svd(a)[0][:, 0] ** 3), _rotated([2.0, 2.0, 5.0]),
     "needs distinct singular values"),
    (lambda a: np.linalg.norm(a, "nuc"), normal((3, 2)) @ normal((2, 3), seed=1),
     "singular value 0"),
    (lambda a: np.linalg.norm(a, 2), _rotated([4.0, 4.0, 1.0]), "repeats"),
], ids=["eigh", "svd", "nuclear norm below full rank", "spectral norm"])
def test_values_equal_up_to_rounding_count_as_equal(f, a, match):
    refused(f, a, match=match)
