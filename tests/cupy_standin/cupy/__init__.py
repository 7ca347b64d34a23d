"""A NumPy-backed stand-in for CuPy, for testing the CuPy path without a GPU.

It keeps what generated code and yota-src rely on of CuPy, and is as strict
as CuPy where a NumPy-only spelling would slip through unnoticed:

* `cupy.ndarray` is its own type (`__module__` is "cupy");
* arithmetic, ufuncs and module functions refuse a NumPy array operand with
  TypeError, as CuPy does (no implicit transfer between host and device);
* reductions and element reads give 0-d arrays, not NumPy scalars;
* ufuncs have no `.at` (cupyx.scatter_add stands in for np.add.at);
* routines CuPy types as taking an ndarray (`broadcast_to`, `expand_dims`,
  `sum`, `prod`, `squeeze`) refuse a Python or NumPy scalar, and `array` /
  `asarray` refuse a list mixing device arrays with other values (CuPy falls
  back to NumPy there, which refuses the implicit conversion);
* `get_array_module`, `asarray`, `asnumpy` and `ndarray.get` move between the
  libraries explicitly.

Each module function delegates to NumPy's function of the same name.
"""

import builtins

import numpy

__version__ = "0.0.0+standin"
STANDIN = True


def _is_host_array(value) -> bool:
    return type(value) is numpy.ndarray


def _refuse_host(values) -> None:
    for value in values:
        if _is_host_array(value):
            raise TypeError(f"Unsupported type {type(value)}")
        if isinstance(value, (list, tuple)):
            _refuse_host(value)
        elif isinstance(value, dict):
            _refuse_host(value.values())


def _host(value):
    """The NumPy view an operand has inside the delegated call."""
    if isinstance(value, ndarray):
        return value.view(numpy.ndarray)
    if isinstance(value, tuple):
        return tuple(_host(each) for each in value)
    if isinstance(value, list):
        return [_host(each) for each in value]
    if isinstance(value, dict):
        return {key: _host(each) for key, each in value.items()}
    return value


def _device(value):
    """A NumPy result, as CuPy gives it: arrays (0-d for scalars) on the device."""
    if type(value) is numpy.ndarray:
        return value.view(ndarray)
    if isinstance(value, numpy.generic) and not isinstance(value, (numpy.str_, numpy.bytes_)):
        return numpy.asarray(value).view(ndarray)
    if isinstance(value, tuple):
        return tuple(_device(each) for each in value)
    if isinstance(value, list):
        return [_device(each) for each in value]
    return value


class ndarray(numpy.ndarray):  # noqa: N801 - CuPy's name
    """An array on the stand-in device."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method == "at":
            raise AttributeError(f"'cupy.ufunc' object has no attribute 'at' ({ufunc.__name__})")
        _refuse_host(inputs)
        _refuse_host(kwargs.get("out", ()))
        result = getattr(ufunc, method)(*_host(inputs), **_host(kwargs))
        out = kwargs.get("out")
        if out is not None:
            return out[0] if len(out) == 1 else out
        return _device(result)

    def __array_function__(self, func, types, args, kwargs):
        _refuse_host(args)
        _refuse_host(kwargs)
        return _device(func(*_host(args), **_host(kwargs)))

    def __getitem__(self, key):
        _refuse_host((key,))
        return _device(self.view(numpy.ndarray)[_host(key)])

    def __setitem__(self, key, value):
        _refuse_host((key, value))
        self.view(numpy.ndarray)[_host(key)] = _host(value)

    def __array_wrap__(self, array, context=None, return_scalar=False):
        return _device(numpy.asarray(array))

    def get(self):
        """A NumPy copy on the host."""
        return numpy.array(self.view(numpy.ndarray))

    def __repr__(self):
        return "stand-in cupy." + repr(self.view(numpy.ndarray))


def get_array_module(*arrays):
    """This module where any of `arrays` is on the device, else NumPy."""
    return _this if builtins.any(isinstance(each, ndarray) for each in arrays) else numpy


def _refuse_mixed_list(value) -> None:
    if isinstance(value, (list, tuple)):
        items = list(_flattened(value))
        on_device = [isinstance(item, ndarray) for item in items]
        if builtins.any(on_device) and not builtins.all(on_device):
            raise TypeError("Implicit conversion to a NumPy array is not allowed: a list "
                            "mixing device arrays with other values")


def _flattened(value):
    for item in value:
        if isinstance(item, (list, tuple)):
            yield from _flattened(item)
        else:
            yield item


def asarray(value, dtype=None, order=None):
    _refuse_mixed_list(value)
    return _device(numpy.array(_host(value), dtype=dtype, order=order or "K", copy=True)) \
        if _is_host_array(value) or not isinstance(value, ndarray) \
        else (value if dtype is None else value.astype(dtype))


def array(value, dtype=None, copy=True, order="K", ndmin=0):
    _refuse_mixed_list(value)
    return _device(numpy.array(_host(value), dtype=dtype, copy=True, order=order, ndmin=ndmin))


def asnumpy(value):
    """A NumPy copy of a device array (other values as NumPy arrays)."""
    return numpy.array(_host(value))


class _Function:
    """A module function that runs NumPy's on the device's arrays."""

    def __init__(self, function):
        self._function = function
        self.__name__ = getattr(function, "__name__", "function")
        self.__qualname__ = self.__name__
        self.__doc__ = getattr(function, "__doc__", None)

    def __call__(self, *args, **kwargs):
        _refuse_host(args)
        _refuse_host(kwargs)
        return _device(self._function(*_host(args), **_host(kwargs)))

    def __repr__(self):
        return f"<stand-in cupy function {self.__name__}>"


class _ArrayFirst(_Function):
    """A routine whose first parameter CuPy types as `ndarray`."""

    def __call__(self, *args, **kwargs):
        if args and not isinstance(args[0], ndarray):
            raise TypeError(f"{self.__name__}(): argument 'a' has incorrect type (expected "
                            f"cupy.ndarray, got {type(args[0]).__name__})")
        return super().__call__(*args, **kwargs)


_ARRAY_FIRST = {"broadcast_to", "expand_dims", "sum", "prod", "squeeze"}


class ufunc(_Function):  # noqa: N801 - CuPy's name
    """A ufunc with CuPy's methods: no `at` (cupyx.scatter_add does that)."""

    def __getattr__(self, name):
        if name in ("reduce", "accumulate", "outer", "reduceat"):
            return _Function(getattr(self._function, name))
        if name in ("nin", "nout", "nargs", "types", "identity"):
            return getattr(self._function, name)
        raise AttributeError(f"'cupy.ufunc' object has no attribute {name!r}")


ndarray.__module__ = "cupy"
_Function.__module__ = _ArrayFirst.__module__ = ufunc.__module__ = "cupy"
_this = __import__(__name__)
_OWN = {"ndarray", "asarray", "array", "asnumpy", "get_array_module"}


def _populate(namespace: dict, source) -> None:
    """Each public callable of `source` (a NumPy module), wrapped; types
    (dtypes, scalar types) and constants as they are, as CuPy re-exports them."""
    for name in dir(source):
        if name.startswith("_") or name in _OWN or name in namespace:
            continue
        try:
            value = getattr(source, name)
        except AttributeError:
            continue
        if isinstance(value, numpy.ufunc):
            namespace[name] = ufunc(value)
        elif isinstance(value, type) or not callable(value):
            if not isinstance(value, type(numpy)):
                namespace[name] = value
        else:
            namespace[name] = (_ArrayFirst if name in _ARRAY_FIRST else _Function)(value)


_populate(globals(), numpy)
for _name in ("errstate", "seterr", "geterr", "setbufsize", "getbufsize"):  # NumPy's only
    globals().pop(_name, None)

from . import fft, linalg, random  # noqa: E402,F401 - CuPy's submodules
