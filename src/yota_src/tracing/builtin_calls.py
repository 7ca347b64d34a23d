"""How Python's builtins behave on traced values while unrolling.

Each handler takes (unroller, args, kwargs, node, frame). Builtins not listed
here run natively on static values; those that would need to look inside a
traced value are listed, so none ever sees a `Traced` object.
"""

from __future__ import annotations

import copy
import functools
import itertools
import operator
import types

import numpy as np

from yota_src.errors import UnsupportedSyntaxError
from yota_src.ir import contexts
from yota_src.ir.dims import Dim, pinned
from yota_src.tracing import counts
from yota_src.tracing.row_lists import RowList, as_rows, pin_all, refuse_identity
from yota_src.tracing.traced import Traced, has_traced, is_static, values_of


def _len(unroller, args, kwargs, node, frame):
    value = as_rows(*args)
    if isinstance(value, Traced) and isinstance(value.value, (str, bytes)):
        # its length is data
        return unroller.decisions.concretize(value, len, _argument(node), frame)
    if isinstance(value, Traced):
        unroller.access.read_length(value)
        if value.op.dims:
            return value.op.dims[0]  # read at run time (ir/dims.py)
        return len(value.value)
    method = unroller.access.python_method(value, "__len__")
    if method is not None:
        return unroller.calls.inline_function(method, (value,), {}, node, frame)
    unroller.outside_reads.depend_on_contents(value)
    return len(value)


def _argument(node):
    """The argument's node in `int(x)`, for the guard's text: `int(x) was 3`."""
    return node.args[0] if getattr(node, "args", None) else node


def _range(unroller, args, kwargs, node, frame):
    if unroller.user_code and 1 <= len(args) <= 2 and isinstance(args[-1], Dim) and not kwargs:
        start = pinned(args[0]) if len(args) == 2 else 0
        if type(start) is int:  # a count a loop may read at run time (counts.py)
            return counts.SizedRange(start, args[-1])
    written = getattr(node, "args", None) or ()  # each bound's own node, for the guard's text
    return range(*(unroller.decisions.concretize(a, operator.index, written[i] if i < len(written)
                                                 else node, frame) for i, a in enumerate(args)))


def _int(unroller, args, kwargs, node, frame):
    return unroller.decisions.concretize(args[0], int, _argument(node), frame) if args else 0


def _id(unroller, args, kwargs, node, frame):
    """id() of a traced value is refused: each call gets its own arrays, whose
    ids no guard can compare (`is` is guarded instead)."""
    refuse_identity(*args)
    if has_traced(args):
        raise UnsupportedSyntaxError(
            "id() of a value computed from the arguments", unroller.location_of(node, frame),
            hint="Compare the values with `is` (checked at each call) instead of their ids.")
    return id(*args)


def _bool(unroller, args, kwargs, node, frame):
    return unroller.decisions.truth(args[0], node, frame) if args else False


def _isinstance(unroller, args, kwargs, node, frame):
    value, cls = args
    return isinstance(value.value if isinstance(value, (Traced, Dim)) else value, cls)


def _sum(unroller, args, kwargs, node, frame):
    items = unroller.access.iterate(args[0], node, frame)
    start = args[1] if len(args) > 1 else kwargs.get("start", 0)
    if not items:
        return start
    first = items[0]
    numeric = isinstance(first, Traced) and first.op.dtype is not None \
        and first.op.dtype != np.bool_  # True + True is True for NumPy booleans; 0 + True is 1
    total = first if (numeric and isinstance(start, (int, float)) and start == 0) else \
        unroller.operators.binary(operator.add, start, first)
    for item in items[1:]:
        total = unroller.operators.binary(operator.add, total, item)
    return total


def _getattr(unroller, args, kwargs, node, frame):
    try:
        return unroller.access.attribute(args[0], args[1], node, frame)
    except AttributeError:
        # getattr(config, "dropout", 0.0)
        unroller.outside_reads.depend_on_absence(args[0], args[1])
        if len(args) > 2:
            return args[2]
        raise


def _hasattr(unroller, args, kwargs, node, frame):
    try:
        unroller.access.attribute(args[0], args[1], node, frame)
        return True
    except AttributeError:
        unroller.outside_reads.depend_on_absence(args[0], args[1])
        return False


def _super(unroller, args, kwargs, node, frame):
    """`super()` without arguments, inside an unrolled method: the class the
    method was defined in (its `__class__` cell) and its first argument."""
    if args:
        return super(*args)
    params = frame.source.node.args
    first = (params.posonlyargs + params.args)[:1]
    cell = frame.cells.get("__class__")
    if cell is None or not first:
        raise UnsupportedSyntaxError("super() without arguments outside a method",
                                     unroller.location_of(node, frame),
                                     hint="Write super(Class, self) instead.")
    return super(cell.cell_contents, frame.locals[first[0].id])


def _changing_first(fn):
    """next(), setattr(), delattr(): they change their first argument, which
    must not be an outside object or one an argument holds (the generated
    code would not repeat the change)."""
    def handler(unroller, args, kwargs, node, frame):
        if args:
            unroller.outside_reads.refuse_write(args[0], node, frame)
        return fn(*args, **kwargs)
    return handler


FUNCTIONS = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, np.ufunc, type,
             functools.partial)


def _text_to_number(fn):
    """float(x) is recorded; float() of text made from the arguments is
    refused: its derivative through the text would be silently zero."""
    recorded = _traced_primitive(fn)

    def handler(unroller, args, kwargs, node, frame):
        if args and isinstance(args[0], Traced) and isinstance(args[0].value, (str, bytes)):
            raise UnsupportedSyntaxError(
                f"{fn.__name__}() of text made from the arguments",
                unroller.location_of(node, frame),
                hint="No gradient passes through text: use the number itself.")
        return recorded(unroller, args, kwargs, node, frame)
    return handler


# Builtins that ask an object through a special method, which for a user's
# class holding traced values is unrolled (its isinstance tests see them)
_CONVERSIONS = {abs: "__abs__", float: "__float__", int: "__int__", complex: "__complex__"}


def _traced_primitive(fn):
    def handler(unroller, args, kwargs, node, frame):
        if fn in _CONVERSIONS and len(args) == 1 and not kwargs:  # a user class's __abs__, ...
            result = unroller.operators.operator_method(args[0], _CONVERSIONS[fn])
            if result is not NotImplemented:  # unrolled, then converted as Python does
                return result if fn is abs else handler(unroller, (result,), {}, node, frame)
        if has_traced((args, kwargs)):
            return unroller.primitive(fn, args, kwargs)
        return fn(*args, **kwargs)
    return handler


def _iterating(fn):
    """Builtins that iterate their arguments: traced arrays iterate by rows."""
    def handler(unroller, args, kwargs, node, frame):
        args = [unroller.access.iterate(a, node, frame) if isinstance(a, Traced) else a
                for a in args]
        return fn(*routed(unroller, args, node, frame), **routed(unroller, kwargs, node, frame))
    return handler


def routed(unroller, arguments, node, frame, objects: bool = True):
    """The callables among a native function's arguments (map's function,
    sorted's key, reduce's operator) call back through the unroller, so that
    `map(float, x)` or `map(np.exp, x)` records what it applies. With
    `objects=False` only functions and types are: an object that happens to
    be callable (a model with `__call__`) passed to other code is data."""
    def route(value):
        if not callable(value) or isinstance(value, Traced):
            return value
        if not objects and not isinstance(value, FUNCTIONS):
            return value
        return lambda *args, **kwargs: unroller.calls.call(value, args, kwargs, node, frame)
    if isinstance(arguments, dict):
        return {key: route(value) for key, value in arguments.items()}
    return [route(value) for value in arguments]


class _Ordered:
    """An item (or key) of sorted/max/min compared through the unroller, so
    that a user's class holding traced values has its comparison methods
    unrolled, where Python would run them natively."""

    __slots__ = ("unroller", "value")

    def __init__(self, unroller, value):
        self.unroller, self.value = unroller, value

    def compare(self, fn, other):
        unroller = self.unroller
        return unroller.decisions.decide(unroller.operators.binary(fn, self.value, other.value),
                                         bool)

    def __lt__(self, other):
        return self.compare(operator.lt, other)

    def __gt__(self, other):
        return self.compare(operator.gt, other)

    def __le__(self, other):
        return self.compare(operator.le, other)

    def __ge__(self, other):
        return self.compare(operator.ge, other)


def _ordering(fn, plain):
    """sorted, max and min over objects of a user's class that hold traced
    values: compared by their own methods, unrolled (see `_Ordered`)."""
    def handler(unroller, args, kwargs, node, frame):
        items = args if fn is not sorted and len(args) > 1 else \
            args[0] if len(args) == 1 and isinstance(args[0], (list, tuple)) else None
        if items is None or kwargs.get("key") is not None \
                or not any(unroller.operators.compares_itself(item) for item in items):
            return plain(unroller, args, kwargs, node, frame)  # (with a key, its results compare)
        wrapped = [_Ordered(unroller, item) for item in items]
        result = unroller.natively(node, frame, fn, wrapped, **kwargs)
        return [item.value for item in result] if fn is sorted else result.value
    return handler


def _native(fn):
    """Functions that only arrange values and calls (max, functools.reduce,
    itertools): run natively on traced values, whose comparisons and
    arithmetic are recorded and whose decisions are guarded (traced.py)."""
    def handler(unroller, args, kwargs, node, frame):
        return fn(*routed(unroller, args, node, frame), **routed(unroller, kwargs, node, frame))
    return handler


def _holding(cls):
    """functools.partial(f, x): an object that only holds its arguments, made
    natively so that calling it is a call of `f` (the holder is never a value
    of the tape)."""
    def handler(unroller, args, kwargs, node, frame):
        return cls(*args, **kwargs)
    return handler


def _static_info(fn):
    def handler(unroller, args, kwargs, node, frame):
        if fn is type and len(args) == 1 and isinstance(args[0], RowList):
            return list  # (a list argument read as one array, as the caller's list)
        args = tuple(as_rows(a) if isinstance(a, RowList) and len(a.rows.value) else a
                     for a in args)  # (an empty list has no rows: its shape is (0,))
        pin_all((args, kwargs))
        if fn in (np.shape, np.size) and args:
            unroller.access.read_length(args[0])
            dims = args[0].op.dims if isinstance(args[0], Traced) else None
            if dims is not None and fn is np.shape:
                return dims  # sizes read at run time (ir/dims.py)
            if dims is not None and len(args) == 1 and not kwargs:
                return functools.reduce(operator.mul, dims, 1)
            if dims is not None:
                axis = args[1] if len(args) > 1 else kwargs.get("axis")
                if isinstance(axis, int) and not isinstance(axis, bool):
                    return dims[axis]
        return fn(*_numbers(values_of(args)), **values_of(kwargs))
    return handler


def _numbers(args: tuple) -> tuple:
    """A size (ir/dims.py) as the int it is, for what asks its type."""
    return tuple(arg.value if isinstance(arg, Dim) else arg for arg in args)


_BUILTINS = {
    len: _len, id: _id, range: _range, int: _int, bool: _bool, isinstance: _isinstance, sum: _sum,
    getattr: _getattr, hasattr: _hasattr, float: _text_to_number(float),
    complex: _text_to_number(complex),
    super: _super, next: _changing_first(next), setattr: _changing_first(setattr),
    delattr: _changing_first(delattr),
    abs: _traced_primitive(abs), pow: _traced_primitive(pow),
}
# Strings of traced values are recorded values: printed live, and any decision
# taken from them is guarded like one taken from a number.
_BUILTINS.update({fn: _traced_primitive(fn) for fn in (str, repr, ascii, format)})
def _refused(fn):
    def handler(unroller, args, kwargs, node, frame):
        raise UnsupportedSyntaxError(
            f"{fn.__name__}() is not supported", unroller.location_of(node, frame),
            hint="Code built or inspected at run time cannot be unrolled: write it out.")
    return handler


_BUILTINS.update({fn: _refused(fn) for fn in (exec, eval, compile, globals, locals, vars)})


def _global_setting(fn):
    def handler(unroller, args, kwargs, node, frame):
        raise UnsupportedSyntaxError(
            f"np.{fn.__name__}() changes NumPy's error handling for the whole process",
            unroller.location_of(node, frame),
            hint="The generated code would not repeat it: use `with np.errstate(...):` around "
                 "the lines it concerns, which the generated code keeps.")
    return handler


_BUILTINS.update({fn: _global_setting(fn) for fn in (np.seterr, np.seterrcall)})


def _fill_diagonal(unroller, args, kwargs, node, frame):
    """np.fill_diagonal(a, v) on an array the function made: a store of v on
    its diagonal, as `a[i, i] = v` for each i."""
    bound = _bind(_fill_diagonal_signature, args, kwargs)
    a, value, wrap = bound["a"], bound["val"], bound.get("wrap", False)
    shape = np.shape(a.value if isinstance(a, Traced) else a)
    if wrap or len(set(shape)) != 1 and len(shape) != 2:
        raise UnsupportedSyntaxError("np.fill_diagonal(wrap=True) or of a non-square n-d array",
                                     unroller.location_of(node, frame),
                                     hint="Store into the diagonal with an index instead.")
    if not isinstance(a, Traced):
        raise unroller.outside_reads.outside_write(node, frame)
    index = np.diag_indices(min(shape), len(shape))
    dims = a.op.dims
    if dims is not None and any(isinstance(d, Dim) for d in dims):  # sizes read at run time
        n = dims[0] if len(dims) != 2 or unroller.dims.decide(dims[0], operator.le, dims[1]) \
            else dims[1]
        for d in dims[1:] if len(dims) > 2 else ():
            unroller.dims.decide(d, operator.eq, n)
        positions = unroller.primitive(np.arange, (n,), {})
        index = (positions,) * len(dims)
    unroller.writes.store(a, index, value, node, frame)


def _copyto(unroller, args, kwargs, node, frame):
    """np.copyto(dst, src, where=mask) into an array the function made: dst
    holds np.where(mask, src, dst) from then on."""
    bound = _bind(_copyto_signature, args, kwargs)
    dst, src, where = bound["dst"], bound["src"], bound.get("where", True)
    if not isinstance(dst, Traced):
        raise unroller.outside_reads.outside_write(node, frame)
    new = unroller.primitive(np.where, (where, src, dst), {}) if where is not True else \
        unroller.primitive(np.broadcast_to, (src, np.shape(dst.value)), {})
    unroller.writes.mutate(dst, new, node, frame)


# NumPy's documented signatures, written out: C functions such as np.copyto
# carry no signature that inspect can read before NumPy 2.3.
def _fill_diagonal_signature(a, val, wrap=False): ...
def _copyto_signature(dst, src, casting="same_kind", where=True): ...


def _bind(fn, args, kwargs) -> dict:
    import inspect
    bound = inspect.signature(fn).bind(*args, **kwargs)
    return dict(bound.arguments)


def _warning_filter(fn):
    def handler(unroller, args, kwargs, node, frame):
        unroller.statements.set_warning_filter(fn, args, kwargs, node, frame)
    return handler


_BUILTINS.update({fn: _warning_filter(fn) for fn in contexts.FILTERS})
# NumPy functions that write into their first argument, done functionally
_BUILTINS.update({np.fill_diagonal: _fill_diagonal, np.copyto: _copyto})
_BUILTINS.update({fn: _native(fn) for fn in (
    max, min, any, all, functools.reduce, copy.copy, copy.deepcopy,
    *(getattr(itertools, name) for name in (
        "accumulate", "chain", "combinations", "combinations_with_replacement", "compress",
        "count", "cycle", "dropwhile", "filterfalse", "groupby", "islice", "permutations",
        "product", "repeat", "starmap", "takewhile", "tee", "zip_longest")),
    itertools.chain.from_iterable)})
_BUILTINS.update({cls: _holding(cls) for cls in (
    functools.partial, operator.itemgetter, operator.attrgetter)})
# Templates ask whether a value is known while generating: it sees the traced values themselves.
_BUILTINS[is_static] = _native(is_static)
_BUILTINS.update({fn: _iterating(fn) for fn in (
    zip, enumerate, reversed, list, tuple, set, sorted, map, filter, iter, dict)})
_BUILTINS.update({fn: _ordering(fn, _BUILTINS[fn]) for fn in (sorted, max, min)})
# Types, shapes and dtypes are static even for traced arrays.
_BUILTINS.update({fn: _static_info(fn) for fn in (
    type, np.shape, np.ndim, np.size, np.result_type, np.isscalar, np.iscomplexobj, np.isrealobj)})


def builtin_handler(fn):
    try:
        return _BUILTINS.get(fn)
    except TypeError:
        return None
