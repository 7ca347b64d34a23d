"""scipy.signal: convolution and correlation, in every mode.

Loaded by yota_src.rules once the user's code has imported scipy.signal.
Each mode cuts its result out of the full convolution, so the gradient is
the incoming one put back where it was cut from (zeros around it), G, and

    y = convolve(a, b, "full"):  da = convolve(G, flip(b), "valid"),
                                 db = convolve(G, flip(a), "valid").

A correlation is a convolution with the second input flipped. fftconvolve
and oaconvolve convolve along `axes` and broadcast the others.
"""

import numpy as np
import scipy.signal

from yota_src.rules import adjoint

from .helpers import normalize_axes, unbroadcast


def put_back(dy, a, b, mode, axes=None, centre_late=False):
    """`dy` where `mode` cut the result from the full convolution of `a` and
    `b` along `axes` (None: all), zeros elsewhere. 'same' keeps a's size,
    centred (one later for correlate2d's flipped kernel); 'valid' keeps the
    part where one input covers the other."""
    if mode == "full":
        return dy
    convolved = range(np.ndim(dy)) if axes is None else normalize_axes(
        axes if isinstance(axes, (tuple, list)) else (axes,), np.ndim(dy))
    pads = []
    for axis in range(np.ndim(dy)):
        if axis not in convolved:
            pads.append((0, 0))
            continue
        n_a, n_b = np.shape(a)[axis], np.shape(b)[axis]
        full = n_a + n_b - 1
        extra = full - np.shape(dy)[axis]
        if mode == "valid":
            start = min(n_a, n_b) - 1
        else:
            start = (extra + 1) // 2 if centre_late else extra // 2
        pads.append((start, extra - start))
    return np.pad(dy, pads)


def convolve_valid(g, kernel, method):
    """scipy.signal.convolve(g, kernel, "valid"), with the method the primal chose."""
    if method == "auto":
        return scipy.signal.convolve(g, kernel, mode="valid")
    return scipy.signal.convolve(g, kernel, mode="valid", method=method)


def only_zero_fill(function, boundary, fillvalue):
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError(
            f"the rule for {function} covers boundary='fill' with fillvalue=0 (zero padding), "
            f"not boundary={boundary!r}, fillvalue={fillvalue!r}")


@adjoint(scipy.signal.convolve)
def convolve(dy, y, in1, in2, mode="full", method="auto"):
    g = put_back(dy, in1, in2, mode)
    din1 = convolve_valid(g, np.flip(in2), method)
    din2 = convolve_valid(g, np.flip(in1), method)


@adjoint(scipy.signal.correlate)
def correlate(dy, y, in1, in2, mode="full", method="auto"):
    """convolve(in1, flip(in2))."""
    g = put_back(dy, in1, in2, mode)
    din1 = convolve_valid(g, in2, method)
    din2 = np.flip(convolve_valid(g, np.flip(in1), method))


@adjoint(scipy.signal.fftconvolve, scipy.signal.oaconvolve)
def fftconvolve(dy, y, in1, in2, mode="full", axes=None):
    """Along `axes`; the other axes broadcast."""
    g = put_back(dy, in1, in2, mode, axes)
    din1 = unbroadcast(scipy.signal.fftconvolve(g, np.flip(in2, axes), mode="valid", axes=axes),
                       in1)
    din2 = unbroadcast(scipy.signal.fftconvolve(g, np.flip(in1, axes), mode="valid", axes=axes),
                       in2)


@adjoint(scipy.signal.convolve2d)
def convolve2d(dy, y, in1, in2, mode="full", boundary="fill", fillvalue=0):
    """Zero padding only (boundary='fill', fillvalue=0)."""
    only_zero_fill("scipy.signal.convolve2d", boundary, fillvalue)
    g = put_back(dy, in1, in2, mode)
    din1 = scipy.signal.convolve2d(g, np.flip(in2), mode="valid")
    din2 = scipy.signal.convolve2d(g, np.flip(in1), mode="valid")


@adjoint(scipy.signal.correlate2d)
def correlate2d(dy, y, in1, in2, mode="full", boundary="fill", fillvalue=0):
    """convolve2d(in1, flip(in2)), its 'same' part centred one later. Zero padding only."""
    only_zero_fill("scipy.signal.correlate2d", boundary, fillvalue)
    g = put_back(dy, in1, in2, mode, centre_late=True)
    din1 = scipy.signal.convolve2d(g, in2, mode="valid")
    din2 = np.flip(scipy.signal.convolve2d(g, np.flip(in1), mode="valid"))
