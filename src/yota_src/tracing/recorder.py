"""The recorder: what a trace writes, apart from how the code is run.

The interpreter (interpreter.py) decides what the user's code means; each
primitive it applies to traced values, each decision taken from the data,
each argument leaf and each array read from outside comes here, as an op on
the tape with the source location the interpreter passes with it (the
recorder keeps no "current line"), and (while values are kept) its example
value for the reverse pass's templates. It also knows which arrays look into
which (`views`, set up by the interpreter, which can recompute them), and the
expression each input was read by, for messages.
"""

from __future__ import annotations

import operator

import numpy as np

from yota_src.core import nested, primitives
from yota_src.core.values import is_array
from yota_src.errors import Location, NoDiffRuleError, UnsupportedSyntaxError
from yota_src.ir.dims import Dim, has_dims, plain
from yota_src.ir.shapes import result_dims
from yota_src.ir.tape import Call, Const, Guard, Input, Op, shape_and_dtype
from yota_src.tracing import array_library
from yota_src.tracing.counts import Position
from yota_src.tracing.traced import ExampleValues, Traced, traced_in, values_of


class NotCarried(UnsupportedSyntaxError):
    """A primitive gave something no tape value can be (a function, an object)."""


class Recorder:
    def __init__(self, interpreter, keep_values: bool = True):
        # the Traced values made here answer Python's protocols through it (traced.py)
        self.interpreter = interpreter
        self.ops: list[Op] = []
        self.values = ExampleValues()  # example value of each forward op, for the templates
        self.keep_values = keep_values  # False in the reverse pass: values travel with Traced
        self.lifted: dict[int, Traced] = {}  # arrays from outside, by id
        self.input_names: dict[Op, str] = {}  # each input's expression, for messages
        self.views = None  # views.Views: which arrays look into which, set by the interpreter
        self.row_ops: set[Op] = set()  # a list argument's items, read eagerly (`rows`)
        self.stacks: set[Op] = set()  # the inputs such lists are the rows of (row_lists.py)

    def input(self, index: int, path: tuple, value, name: str = "an argument") -> Traced:
        op = Input(index, path, *shape_and_dtype(value), scalar=not is_array(value))
        facts = self.interpreter.dims
        if facts is not None and is_array(value) and np.ndim(value):
            dims = tuple(facts.symbol(index, path, axis, n)
                         for axis, n in enumerate(np.shape(value)))
            op.dims = dims if any(isinstance(d, Dim) for d in dims) else None
        self.ops.append(op)
        self.values[op] = value
        self.input_names[op] = name
        return Traced(op, value, self.interpreter)


    def lift(self, array, name: str | None, loc: Location | None,
             path: tuple | None = None) -> Traced:
        """An array from outside the arguments, read live by the generated code.

        Float arrays count as data (decisions on their contents are guarded,
        since they may change in place); integer and boolean arrays (indices,
        masks) are compared by content in the dependency snapshot instead.
        """
        array_library.refuse_device_value(array, name, loc)
        known = self.lifted.get(id(array))
        if known is not None and known.value is array:
            known.op.origin = known.op.origin or path
            return known
        const = Const(array, loc)
        const.origin = path
        const.hint = name if name and name.isidentifier() else "array"
        const.depends = np.issubdtype(np.asarray(array).dtype, np.inexact)
        self.ops.append(const)
        if self.keep_values:
            self.values[const] = array
        self.lifted[id(array)] = traced = Traced(const, array, self.interpreter)
        return traced


    def record(self, fn, args: tuple, kwargs: dict, value, loc: Location | None,
               note_views: bool = True) -> Traced:
        if isinstance(value, np.matrix):
            raise NoDiffRuleError(
                f"{primitives.display_name(fn)} gives an np.matrix", loc,
                hint="np.matrix redefines `*` and `**` as matrix operations; use np.ndarray "
                     "(np.asarray) with `@` instead.")
        if not _carried(value):
            raise NotCarried(
                f"{primitives.display_name(fn)} gives a {type(value).__name__} object, which "
                "generated code does not carry as a value computed from the arguments",
                loc, hint="Use the NumPy functions that give arrays (np.polyval for "
                "np.poly1d, loops over indices for np.nditer or np.ndenumerate).")
        if isinstance(value, np.ndarray) and value.dtype == object \
                and any(t.op.depends for t in traced_in((args, kwargs))):
            raise NoDiffRuleError(
                f"{primitives.display_name(fn)} gives an array of Python objects", loc,
                hint="Object arrays hold no numbers a gradient can pass through: keep "
                     "numbers in float arrays and text apart.")
        # a draw is data: a decision taken from it is guarded like one taken from x
        depends = any(t.op.depends for t in traced_in((args, kwargs))) \
            or primitives.is_random_draw(fn) \
            or self.interpreter.dims is not None and has_dims((args, kwargs))
        op = Call(fn, self.refs(args, loc), self.refs(kwargs, loc), *shape_and_dtype(value),
                  loc, depends)
        if self.interpreter.dims is not None:
            op.dims = result_dims(fn, args, kwargs, op.shape, self.interpreter.dims)
        self.ops.append(op)
        if self.keep_values:
            self.values[op] = value
            if fn in primitives.INDEX_STORES and isinstance(op.args[0], Op):
                self.values.supersede(op.args[0], op, plain(values_of(args[1])))
        result = Traced(op, value, self.interpreter)
        if note_views:
            self.views.note(result, fn, args, kwargs)
        return result


    def rows(self, array: Traced) -> list[Traced]:
        """`array[0]`, `array[1]`, ...: each row read, as `record` would record
        it, without deciding that the length is above each index (a list
        argument's items, tracing/row_lists.py)."""
        dims = array.op.dims[1:] if array.op.dims is not None else None
        shape, dtype = array.op.shape[1:], array.op.dtype
        made = []
        for i, value in enumerate(array.value):
            op = Call(operator.getitem, (array.op, i), {}, shape, dtype, None, array.op.depends)
            op.dims = dims
            self.ops.append(op)
            self.row_ops.add(op)
            if self.keep_values:
                self.values[op] = value
            made.append(Traced(op, value, self.interpreter))  # a write refused (writes.py)
        return made

    def dimension(self, dim: Dim) -> Traced:
        """A dimension used as a number (`1 / n`): a traced int the code
        computes from the arguments' dimensions."""
        op = Call(primitives.dimension, (dim,), {}, (), np.dtype(np.int64),
                  self.interpreter.loc, True)
        self.ops.append(op)
        if self.keep_values:
            self.values[op] = dim.value
        return Traced(op, dim.value, self.interpreter)

    def guard(self, value: Op, expected, convert, text: str, loc: Location | None,
              within: str | None = None) -> None:
        """A decision taken from the data, checked again at run time."""
        self.ops.append(Guard(value, expected, convert, text, loc, within))

    def refs(self, structure, loc: Location | None = None):
        """Traced values -> their ops; arrays -> Const ops (from outside: every
        array made here is traced); NumPy scalars stay static, as literals."""
        def ref(value):
            if type(value) is Position:  # an index that moved with a counter: the number
                return int(value)
            return value.op if isinstance(value, Traced) else self.lift(value, None, loc).op
        return nested.map_leaves(structure, ref, lambda value: isinstance(value, Traced) or (
            is_array(value) and not isinstance(value, np.generic)) or type(value) is Position)


def _carried(value) -> bool:
    """Values a tape holds: arrays, numbers, text, random generators, and
    tuples or lists of them."""
    if is_array(value) or value is None or isinstance(
            value, (np.generic, int, float, complex, str, bytes, np.dtype, slice,
                    *primitives.GENERATORS)):
        return True
    if isinstance(value, (tuple, list)):
        return all(_carried(item) for item in value)
    return False
