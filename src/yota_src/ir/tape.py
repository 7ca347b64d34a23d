"""The Tape: a straight-line SSA program, the contract between all stages.

The grammar (as autodidax writes the jaxpr's):

    tape      ::= op* ; output                      each op defined once, before use
    op        ::= Input(index, path)                a leaf of positional argument `index`
                | Const(value)                      an array or generator read from outside
                | Call(fn, args, kwargs)            a primitive on ops and static values
                | Guard(op, convert, expected)      `convert(op) == expected` held when traced
    fn        ::= a primitive (np.tanh, operator.add, primitives.index_update, ...)
                | Loop                              a rolled loop (ir/loops.py), below
    args      ::= structure of (op | static value)  nested tuples, lists, dicts and slices
    output    ::= structure of (op | static value)  forward tape: the primal's result;
                                                    gradient tape: (result, gradient per
                                                    positional argument: op, {path: op} or None)
    Loop      ::= body ops over Param(counter | carried | outside) ; results ; saved
                                                    a closed body: its call's args are the
                                                    carried values' initial values, then the
                                                    outside values; its value is a tuple: the
                                                    carried values after the last iteration,
                                                    then a stack per saved body value

Every op has a shape (None for a tuple-valued call, whose items are read with
`operator.getitem` calls), a dtype, the source location it was recorded at
(its `context`: the `with`/`try` blocks around it; its `loops`: the loop
iterations it ran in) and `depends` (does it depend on the inputs). Guards
have no value: they only fail. A gradient tape holds the primal's ops first
(`n_forward` of them), then the reverse pass's; `labels` and `origins` say
which user's name or which op's gradient an op stands for.

An op *is* the value it produces: arguments of a `Call` refer to other ops
directly. Each op carries its value's shape and dtype and the source
location it came from, never the value itself, so a cached tape does not keep
example arrays alive. Ops never change once a tape holds them: a pass returns
a new tape; `Tape.verify()` checks all of the above.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from yota_src.core import nested, primitives
from yota_src.core.values import describe_dtype, get_path
from yota_src.errors import ControlFlowChanged, Location, SignatureMismatch
from yota_src.ir.display import source_html, source_markdown
from yota_src.ir.signature import signature_key


class Op:
    """One SSA value."""

    __slots__ = ("shape", "dtype", "loc", "hint", "depends", "last_name", "dims")

    def __init__(self, shape, dtype, loc: Location | None = None, depends: bool = False):
        self.shape = shape
        self.dtype = dtype
        # the shape with a Dim (ir/dims.py) where a size follows the arguments'
        # dimensions; None where every size is the example's
        self.dims: tuple | None = None
        self.loc = loc
        # the user's name for this value: set by whoever creates the op, as it is
        # recorded, never changed once a tape holds it (a pass that moves a name
        # says so in its output tape's `labels`)
        self.hint: str | None = None
        # the name the user's code bound it to last (`x = x_next`: x), as recorded:
        # the name a loop carries it under
        self.last_name: str | None = None
        self.depends = depends  # does the value depend on the function's inputs?

    @property
    def differentiable(self) -> bool:
        return self.dtype is not None and np.issubdtype(self.dtype, np.inexact)

    def describe_type(self) -> str:
        if self.shape is None:
            return "tuple"
        return f"{describe_dtype(self.dtype)} {self.shape}"


class Input(Op):
    """A leaf of the positional argument `index`, reached by `path`."""

    __slots__ = ("index", "path", "scalar")

    def __init__(self, index: int, path: tuple, shape, dtype, scalar: bool):
        super().__init__(shape, dtype, None, depends=True)
        self.index = index
        self.path = path  # ((ATTR|ITEM, key), ...); see core/values.py
        self.scalar = scalar  # a Python float rather than an array


class Const(Op):
    """A value known when the tape was built (e.g. an array global)."""

    __slots__ = ("value", "origin")

    def __init__(self, value, loc: Location | None = None):
        super().__init__(np.shape(value), np.asarray(value).dtype, loc)
        self.value = value
        # (module name, path) where an import finds the value again (`model.W`:
        # ("model", (("attr", "W"),))); None for a closure cell, a default, ...
        self.origin: tuple | None = None


class Call(Op):
    """`fn(*args, **kwargs)`, a primitive applied to ops and static values."""

    __slots__ = ("fn", "args", "kwargs", "selects")

    def __init__(self, fn: Callable, args: tuple, kwargs: dict, shape, dtype, loc, depends):
        super().__init__(shape, dtype, loc, depends)
        self.fn = fn
        self.args = args
        self.kwargs = kwargs
        # a boolean mask whose count is a size: what it selects, as a key
        # (ir/shapes.py), which a pass's copy of it keeps
        self.selects = None


class Guard(Op):
    """Run-time check that `convert(value) == expected`, as it was when traced."""

    __slots__ = ("value", "expected", "convert", "text", "within", "sizes")

    def __init__(self, value: Op, expected, convert: Callable, text: str, loc,
                 within: str | None = None):
        super().__init__(None, None, loc, depends=True)
        self.value = value
        self.expected = expected
        self.convert = convert
        self.text = text  # the user's expression, for messages
        self.within = within  # the call that decided it natively (`sorted(xs)`), if any
        # the counts of masks (ir/dims.Count) it checks: dropped where each is read at
        # run time, as no code then relies on the example's count
        self.sizes: tuple = ()

    def on(self, value: Op) -> Guard:
        """The same check of another value (a pass's copy of this one's)."""
        made = Guard(value, self.expected, self.convert, self.text, self.loc, self.within)
        made.sizes = self.sizes
        return made

    def read_at_run_time(self, facts) -> bool:
        """Whether it checks only counts of masks the code reads at run time
        (ir/dims.Count): no code relies on the example's count, so nothing
        checks it, in the generated code or in a rolled loop's run."""
        return bool(self.sizes) and facts is not None \
            and all(facts.free_count(symbol) for symbol in self.sizes)

    def message(self, function_name: str) -> str:
        return other_path(function_name, self.described())

    def described(self) -> str:
        """The fact and where it was decided: "`x > 0` was True (f.py:3)"."""
        return f"{self.fact()}{self.where()}"

    def where(self) -> str:
        context = [f"in `{self.within}`"] if self.within else []
        context += [self.loc.short] if self.loc else []
        return f" ({', '.join(context)})" if context else ""

    def fact(self) -> str:
        """What was true when traced: "`x > 0` was True", "int(n) was 3"."""
        return f"{self.expression()} was {self.shown(self.expected)}"

    def expression(self) -> str:
        """What was decided: "`x > 0`", "int(n)"."""
        if self.convert is bool:
            return f"`{self.text}`"
        if self.convert in primitives.METHODS:
            return f"{self.text}.{primitives.METHODS[self.convert]}()"
        return f"{self.convert.__name__}({self.text})"

    def shown(self, value) -> str:
        if self.convert is bool:
            return str(value)
        text = repr(value)
        return text[:57] + "..." if len(text) > 60 else text


def other_path(function_name: str, fact: str) -> str:
    """The ControlFlowChanged message for a decision the data took otherwise."""
    return f"{function_name} was generated for data where {fact}; this call goes the other way"


def sizes(op: Op) -> tuple:
    """`op`'s shape as code writes it: its run-time sizes (ir/dims.py) where
    it has any, else its example shape."""
    return op.dims if op.dims is not None else op.shape


def same_shape(a: Op, b: Op) -> bool:
    """The same shape whatever the sizes (ir/dims.py): equal at the example
    and equal as expressions of the arguments' sizes, not by coincidence."""
    return a.shape == b.shape and sizes(a) == sizes(b)


def shape_and_dtype(value) -> tuple:
    """(shape, dtype) of a primitive's result; a tuple of arrays (np.split,
    np.linalg.qr) has no shape, and the dtype its elements share."""
    if isinstance(value, (str, bytes)):  # np.result_type would read "f8" as a dtype
        return (), np.dtype(type(value))
    if isinstance(value, (tuple, list)):
        try:
            return None, np.result_type(*value) if value else None
        except (TypeError, ValueError):
            return None, None
    try:
        return np.shape(value), np.result_type(value)
    except (TypeError, ValueError):
        return None, None


# --- nested argument structures -------------------------------------------

def map_refs(structure, fn: Callable[[Op], Any]):
    """Apply `fn` to every op inside a nested argument structure."""
    return nested.map_leaves(structure, fn, lambda value: isinstance(value, Op))


def leaves_of(structure, kind: type) -> Iterator:
    """The values of type `kind` inside nested tuples, lists, dicts and slices."""
    return nested.leaves(structure, lambda value: isinstance(value, kind))


def iter_refs(structure) -> Iterator[Op]:
    """The ops inside a nested argument structure, in order."""
    return leaves_of(structure, Op)


def operands(op: Op) -> Iterator[Op]:
    """The ops `op` reads."""
    if isinstance(op, Call):
        for arg in op.args:  # (most are ops or numbers: no walk)
            if isinstance(arg, Op):
                yield arg
            elif isinstance(arg, (tuple, list, dict, slice)):
                yield from iter_refs(arg)
        if op.kwargs:
            yield from iter_refs(op.kwargs)
    elif isinstance(op, Guard):
        yield op.value


def readers(ops: list[Op], output) -> dict[Op, list]:
    """Each op's readers, in order; `None` stands for the output."""
    users: dict[Op, list] = {}
    for op in ops:
        for operand in operands(op):
            users.setdefault(operand, []).append(op)
    for op in iter_refs(output):
        users.setdefault(op, []).append(None)
    return users


# --- the tape -------------------------------------------------------------

class Tape:
    """A straight-line program over the leaves of a function's arguments:
    what `trace` returns, and `GradientResult.tape`.

    `print(tape)` lists one primitive operation per line (`%3 = np.tanh(%2)
    :: float64 (3, 5)  # model.py:12`) and its output; `tape.play(*args)`
    runs it again on arguments of the same specialisation, `tape.compile()`
    makes it a Python function. In Jupyter it shows as highlighted source.
    A tape holds each op's shape, dtype and source line, never the example
    values, so keeping one keeps no arrays alive; it caches nothing.
    `play` and `compile`'s function raise `errors.SignatureMismatch` for
    other arguments, and `errors.ControlFlowChanged` where the data takes a
    branch the other way.

    Example:

        >>> import numpy as np
        >>> import yota_src as ys
        >>> def f(x):
        ...     return np.sum(np.tanh(x))
        >>> value, tape = ys.trace(f, np.zeros(3))
        >>> print(tape.play(np.ones(3)) == f(np.ones(3)), len(tape))
        True 3

    For the stages that build and rewrite tapes: `output` is a nested
    structure of ops and static values: the primal's result for a forward
    tape; `(result, gradients...)` for a gradient tape.
    `n_forward` counts the ops that belong to the primal.

    `origins` and `labels` say what an op stands for, for naming (codegen/names.py): a string is a
    name of the user's (carried to an op that took the place of a named one),
    an op means "the gradient of that op". An op without a label is known by
    its own `hint`, if any. Passes never change an op they did not create;
    what they learn about names goes into the labels of the tape they return.
    """

    def __init__(self, ops: list[Op], output, signature, n_forward: int | None = None,
                 dependencies: tuple = (), labels: dict | None = None,
                 origins: dict | None = None, free_counts: frozenset = frozenset()):
        self.ops = ops
        self.output = output
        self.signature = signature  # signature.Signature: what the tape is specialised to
        self.n_forward = len(ops) if n_forward is None else n_forward
        # what the trace read from outside the arguments (specialisation.Dependency)
        self.dependencies = dependencies
        self.labels: dict[Op, str | Op] = labels or {}
        # an op a pass made in place of a recorded one -> that recorded op, whose
        # example value it computes too (the reverse pass's templates read it)
        self.origins: dict[Op, Op] = origins or {}
        # int arguments read at run time as trip counts, whatever their value (the
        # signature's value of them is the example's; counts.py)
        self.free_counts = free_counts

    def replace(self, **changes) -> Tape:
        """A new tape with some fields changed and the others shared."""
        fields = dict(ops=self.ops, output=self.output, signature=self.signature,
                      n_forward=self.n_forward, dependencies=self.dependencies,
                      labels=self.labels, origins=self.origins, free_counts=self.free_counts)
        fields.update(changes)
        if "ops" in changes and "n_forward" not in changes:
            fields["n_forward"] = len(fields["ops"])
        return Tape(**fields)

    def label(self, op: Op) -> str | Op | None:
        """The user's name for `op`, or the op it is the gradient of, or None."""
        return self.labels.get(op, op.hint)

    @property
    def inputs(self) -> list[Input]:
        """The ops that read the arguments' leaves, in order."""
        return [op for op in self.ops if isinstance(op, Input)]

    def forward(self) -> Tape:
        """The primal part alone."""
        ops = self.ops[: self.n_forward]
        kept = set(ops)
        return self.replace(ops=ops, labels={op: label for op, label in self.labels.items()
                                             if op in kept and not isinstance(label, Op)})

    def __len__(self) -> int:
        return len(self.ops)

    def __str__(self) -> str:
        names = {op: f"%{i + 1}" for i, op in enumerate(self.ops)}
        show = lambda s: _show(s, names)  # noqa: E731
        lines = []
        for op in self.ops:
            if isinstance(op, Input):
                text = f"input {self.signature.leaf_expression(op.index, op.path)}"
            elif isinstance(op, Const):
                text = f"const {np.array2string(np.asarray(op.value), threshold=6)}"
            else:
                text = op_text(op, names)
            where = f"  # {op.loc.short}" if op.loc else ""
            kind = "" if isinstance(op, Guard) else f"  :: {op.describe_type()}"
            lines.append(f"{names[op]} = {text}{kind}{where}")
            if _composite(op):  # a rolled loop: its body, indented
                lines += op.fn.listing(names)
        lines.append(f"return {show(self.output)}")
        return "\n".join(lines)

    __repr__ = __str__

    # How a tape is drawn: dot.py's `to_dot`, which reads this module's
    # classes, set by the package (yota_src/ir/__init__.py) as `compiler` is.
    drawer: Callable[[Tape], str] | None = None

    def to_dot(self) -> str:
        """The tape as a Graphviz DOT graph (`dot -Tsvg`): data flow, each op
        labelled with its source line, a gradient's reverse pass apart."""
        return Tape.drawer(self)

    def verify(self, values=None) -> Tape:
        """Check the tape is a well-formed program; raise TapeError naming the
        first fault. Each op appears once, after every op it reads; inputs
        are in the primal section; the output, labels and origins
        refer to ops of the tape; a gradient label sits on a reverse-pass op
        and names a primal op. With `values` (example values by op, as the
        unroller recorded them), each op's shape and dtype must be its
        value's. Returns the tape, so passes can be chained through it."""
        position: dict[Op, int] = {}
        for index, op in enumerate(self.ops):
            if op in position:
                _fault(f"%{index + 1} is the same op as %{position[op] + 1}")
            for operand in operands(op):
                if operand not in position:
                    _fault(f"%{index + 1} reads an op {_where(operand, self.ops)}")
            if _composite(op):
                op.fn.verify(lambda message, at=index: _fault(f"%{at + 1}: {message}"))
            if isinstance(op, Input) and index >= self.n_forward:
                _fault(f"%{index + 1} is an input in the reverse section")
            if values is not None and op in values and _numeric(values[op]):
                recorded = shape_and_dtype(values[op])
                if not _same_type(recorded, (op.shape, op.dtype)):
                    _fault(f"%{index + 1} says {op.describe_type()} but its value is "
                           f"{recorded}")
            position[op] = index
        if not 0 <= self.n_forward <= len(self.ops):
            _fault(f"n_forward = {self.n_forward} for {len(self.ops)} ops")
        for op in iter_refs(self.output):
            if op not in position:
                _fault(f"the output holds an op {_where(op, self.ops)}")
        for op, label in self.labels.items():
            if op not in position:
                _fault(f"a label ({label!r}) is on an op {_where(op, self.ops)}")
            if isinstance(label, Op) and (position[op] < self.n_forward
                                          or position.get(label, self.n_forward)
                                          >= self.n_forward):
                _fault(f"%{position[op] + 1} is labelled a gradient, but only reverse-pass "
                       "ops are gradients, of primal ops")
        for op in self.origins:
            if op not in position:
                _fault(f"an origin is recorded for an op {_where(op, self.ops)}")
        return self

    def play(self, *args) -> Any:
        """Run the tape again on new arguments of the same specialisation and
        return what `f` would. Raises `errors.SignatureMismatch` for other
        arguments (kinds, shapes, dtypes) or outside state that changed since
        it was recorded, `errors.ControlFlowChanged` where a recorded decision
        goes the other way."""
        self.check(args)
        values: dict[Op, Any] = {}
        for op in self.ops:
            if isinstance(op, Input):
                values[op] = get_path(args[op.index], op.path)
                if self.signature.stacked(op.index, op.path):  # a list read as one array
                    values[op] = np.stack(values[op])
            elif isinstance(op, Const):
                values[op] = op.value
            elif isinstance(op, Call):
                look = lambda s: map_refs(s, values.__getitem__)  # noqa: E731
                values[op] = op.fn(*look(op.args), **look(op.kwargs))
            elif op.convert(values[op.value]) != op.expected:
                raise ControlFlowChanged(op.message(self.signature.function_name))
        return map_refs(self.output, values.__getitem__)

    def check(self, args: tuple) -> None:
        """SignatureMismatch unless `args` and the outside state the tape read
        are what it was recorded with (the leaves' kinds, shapes and dtypes)."""
        name = self.signature.function_name
        for dependency in self.dependencies:
            if not dependency.holds():
                raise SignatureMismatch(f"{name}'s tape was recorded when {dependency.what} was "
                                        f"{dependency.shown}; it has changed since")
        if len(args) != len(self.signature.leaves) or signature_key(args) != self.key:
            raise SignatureMismatch(f"{name}'s tape was recorded for {self.signature.describe()}"
                                    "; these arguments differ")

    @property
    def key(self):
        """The specialisation it was recorded for, as ys.grad's cache keys it."""
        return self.signature.key

    # How a tape becomes a Python function: codegen's `compile_forward`, set by
    # the package (yota_src/__init__.py), so this module imports nothing above it.
    compiler: Callable[[Tape], Callable] | None = None

    def compile(self) -> Callable:
        """A Python function equivalent to `play`, without the interpretation:
        generated code, raising what `play` raises. Generated anew on each
        call; keep the function."""
        function = Tape.compiler(self.forward())
        if not self.dependencies:
            return function

        def checked(*args):
            self.check(args)
            return function(*args)
        return functools.wraps(function)(checked)

    def _repr_html_(self) -> str:
        """Jupyter: the listing `print(tape)` gives, highlighted (display.py)."""
        return source_html(str(self))

    def _repr_markdown_(self) -> str:
        return source_markdown(str(self))


class TapeError(AssertionError):
    """A pass produced a malformed tape: a bug in yota-src, not in user code."""


def _fault(message: str):
    raise TapeError(f"malformed tape: {message}")


def _same_type(a: tuple, b: tuple) -> bool:
    """Equal shapes, and dtypes equal but for byte order (a const keeps `>f8`)."""
    (shape_a, dtype_a), (shape_b, dtype_b) = a, b
    if shape_a != shape_b or (dtype_a is None) != (dtype_b is None):
        return False
    return dtype_a is None or np.dtype(dtype_a).newbyteorder("=") == \
        np.dtype(dtype_b).newbyteorder("=")


def op_text(op: Op, names: dict) -> str:
    """A call or a guard as a listing shows it: `matmul(%1, %2)`."""
    if isinstance(op, Call):
        parts = [_show(a, names) for a in op.args]
        parts += [f"{k}={_show(v, names)}" for k, v in op.kwargs.items()]
        return f"{primitives.display_name(op.fn)}({', '.join(parts)})"
    return f"guard {op.convert.__name__}({names[op.value]}) == {op.expected!r}"


def _composite(op: Op) -> bool:
    """A call of a program of ops (a rolled loop, loops.py), not of a primitive."""
    return isinstance(op, Call) and callable(getattr(op.fn, "listing", None))


def _numeric(value) -> bool:
    return isinstance(value, (np.ndarray, np.generic, bool, int, float))


def _where(op: Op, ops: list) -> str:
    return "defined later" if op in ops else "not on the tape"


def _show(structure, names: dict) -> str:
    if isinstance(structure, Op):
        return names[structure]
    if isinstance(structure, tuple):
        inner = ", ".join(_show(item, names) for item in structure)
        return f"({inner},)" if len(structure) == 1 else f"({inner})"
    if isinstance(structure, list):
        return "[" + ", ".join(_show(item, names) for item in structure) + "]"
    if isinstance(structure, dict):
        return "{" + ", ".join(f"{k!r}: {_show(v, names)}" for k, v in structure.items()) + "}"
    if isinstance(structure, slice):
        parts = [_show(p, names) if p is not None else "" for p in
                 (structure.start, structure.stop, structure.step)]
        return ":".join(parts[:2] if structure.step is None else parts)
    return repr(structure)
