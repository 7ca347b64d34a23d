"""Reshaping, transposing and indexing."""

import operator

import numpy as np

from yota_src import primitives
from yota_src.rules import adjoint

from .helpers import cast, selects_everything, unbroadcast, zeros_like_input


@adjoint(np.reshape)
def reshape(dy, y, a, shape=None, order="C"):
    da = np.reshape(dy, np.shape(a), order=order) if order != "C" else np.reshape(dy, np.shape(a))


@adjoint(np.ravel, np.squeeze, np.expand_dims)
def reshaped(dy, y, a, axis=None):
    da = np.reshape(dy, np.shape(a))


@adjoint(primitives.T)
def T(dy, y, a):
    da = dy.T


@adjoint(np.transpose)
def transpose(dy, y, a, axes=None):
    if axes is None:
        da = np.transpose(dy)
    else:
        order = [axis % np.ndim(a) for axis in axes]
        da = np.transpose(dy, tuple(order.index(i) for i in range(len(order))))


@adjoint(np.swapaxes)
def swapaxes(dy, y, a, axis1, axis2):
    da = np.swapaxes(dy, axis1, axis2)


@adjoint(primitives.astype)
def astype(dy, y, a, dtype):
    da = cast(dy, a)


@adjoint(operator.getitem)
def getitem(dy, y, a, index):
    """Indexing scatters the gradient back; repeated indices accumulate. An
    index that only adds axes (`b[:, None]`) is a reshape."""
    if selects_everything(index):
        da = np.reshape(dy, np.shape(a))
    else:
        da = primitives.index_add(zeros_like_input(a), index, dy)


@adjoint(primitives.index_add)
def index_add(dy, y, buffer, index, values):
    dbuffer = dy
    dvalues = unbroadcast(dy[index], values)


@adjoint(primitives.index_update)
def index_update(dy, y, buffer, index, values):
    """`buffer[index] = values`: the overwritten elements pass no gradient back."""
    dbuffer = primitives.index_update(dy, index, 0.0)
    dvalues = unbroadcast(dy[index], values)
