"""What the gradient functions return, and the compiled code behind them.

`Compiled` is one generated module as the pipeline loaded it, with what it
was specialised to; `GradientResult` holds one call's gradients (`ys.grad`),
`GradFunction` a module to call again and save (`ys.simplegrad`,
`ys.derivative`), `Pullback` a vector-Jacobian product's (`ys.vjp`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from yota_src.codegen import loader
from yota_src.core.values import get_path
from yota_src.errors import SignatureMismatch
from yota_src.ir import display
from yota_src.ir.specialisation import all_hold, first_stale
from yota_src.ir.tape import Tape


@dataclass
class Compiled:
    """One generated module as the pipeline loaded it, with what it was
    specialised to: what ys.grad's cache keeps and the results hold."""

    function: Callable
    source: str
    tape: Tape  # the forward tape
    dependencies: tuple  # what was read from outside the arguments (specialisation.py)
    # the random generators it draws from, but those passed in (each call's own)
    generators: tuple = ()
    draws: bool = False  # does it draw at all (then each call's generators are found)
    # it prints or warns, and logs nothing: its output can be held back while it
    # may turn out not to apply (a logging handler's stream cannot, and holding
    # the rest back would reorder the two)
    holds_output: bool = False
    value: Any = None  # the example's value (vjp returns it)
    generated_from: Tape | None = None  # the optimised tape the code was written from

    def __post_init__(self):
        self.fresh = all_hold(self.dependencies)  # asked on every cache hit
        # a cache hit may run it as it is: it draws nothing (else the generators a
        # call passes are found first, to rewind where it turns out not to apply)
        self.quick = not self.draws


class GradientResult(Sequence):
    """The gradients `grad` returns, one per positional argument of `f`.

    `g[i]` is the gradient for argument `i`: an array or float shaped like
    it; a dict `{path: gradient}` for a struct (an object with attributes, a
    dataclass, namedtuple, dict, list or tuple), a path being a tuple of
    attribute names, keys and indices such as `('layers', 0, 'W')`; None for
    arguments with nothing to differentiate (ints, bools, strings, None,
    integer arrays) and for those left out of `wrt`. It unpacks like a tuple
    (`dW, db = g`) and is a `collections.abc.Sequence`.

    Holds references only: the gradients of this call, and the cached code
    they came from (`tape`, `source`). Nothing is computed on access; `g[i]`
    raises IndexError past the last argument, as a tuple does.
    In Jupyter it shows what each gradient is over the highlighted source.

    Example:

        >>> import numpy as np
        >>> import yota_src as ys
        >>> def loss(params, x):
        ...     return np.sum(params["w"] * x)
        >>> _, g = ys.grad(loss, {"w": np.ones(2)}, np.array([3.0, 4.0]))
        >>> g[0]
        {('w',): array([3., 4.])}
        >>> print(g[1])
        [1. 1.]
    """

    __slots__ = ("_gradients", "_compiled")  # made on every ys.grad call: kept cheap

    def __init__(self, gradients: tuple, compiled: Compiled):
        self._gradients = gradients
        self._compiled = compiled

    @property
    def tape(self) -> Tape:
        """The forward `Tape` the gradient was generated from: one primitive
        operation per line (`print(g.tape)`); shared with the cache."""
        return self._compiled.tape

    @property
    def source(self) -> str:
        """The generated gradient module's Python source, as `simplegrad`
        would write it for these arguments."""
        return self._compiled.source

    def __getitem__(self, index):
        return self._gradients[index]

    def __len__(self) -> int:
        return len(self._gradients)

    def __iter__(self):  # unpacking, without Sequence's __getitem__ until IndexError
        return iter(self._gradients)

    def __repr__(self) -> str:
        return f"GradientResult({list(self._gradients)!r})"

    def _caption(self) -> str:
        return "GradientResult: " + "; ".join(
            f"g[{index}] {display.described(gradient)}"
            for index, gradient in enumerate(self._gradients))

    def _repr_html_(self) -> str:
        """Jupyter: what each gradient is, over the gradient module's source."""
        return display.source_html(self.source, self._caption())

    def _repr_markdown_(self) -> str:
        return display.source_markdown(self.source, self._caption())


class GradFunction:
    """A generated gradient function, as `simplegrad` and `derivative` return.

    `df(*args)`, called like the primal, returns `(value, d0, d1, ...)`: one
    gradient per positional argument, with `grad`'s conventions (arrays,
    path dicts for structs, None). `df.source` and `str(df)` are the module's
    Python source; `df.save(path)` writes it as a module that needs only
    NumPy. In Jupyter it shows as highlighted source.

    It caches nothing: the code was generated once, when it was made, and
    every call runs it. The arrays' sizes are read at run time where the
    code allows (one function for every batch size); calls raise
    `errors.SignatureMismatch` for arguments of other ranks, dtypes, sizes
    it keeps or non-array values than it was generated for, and once
    something it folded from outside its arguments (a global, a closure
    variable, a default) has changed; `errors.ControlFlowChanged` where a
    data-dependent branch (or one taken from a size) goes the other way.
    Both are ValueErrors.

    Example:

        >>> import numpy as np
        >>> import yota_src as ys
        >>> def loss(w, x):
        ...     return np.sum((w * x) ** 2)
        >>> df = ys.simplegrad(loss, np.ones(2), np.ones(2))
        >>> value, dw, dx = df(np.array([1.0, 2.0]), np.array([3.0, 1.0]))
        >>> print(value, dw, dx)
        13.0 [18.  4.] [6. 8.]
        >>> df(np.ones(3), np.ones(3))[1]  # any length
        array([2., 2., 2.])
        >>> df(np.ones((2, 2)), np.ones((2, 2)))
        Traceback (most recent call last):
        ...
        yota_src.errors.SignatureMismatch: grad_loss was generated for ...
    """

    def __init__(self, compiled: Compiled, bound: tuple = ()):
        self._function = compiled.function
        self._dependencies = compiled.dependencies
        self._fresh = compiled.fresh
        self.source = compiled.source
        self.gradient_tape = compiled.generated_from
        """The tape the module was generated from: the forward ops, then the
        reverse pass's, optimised (`print(df.gradient_tape)`, `.to_dot()`)."""
        self._bound = bound
        self.__name__ = compiled.function.__name__
        signature = compiled.tape.signature
        # The generated code knows a class of the user's by its qualified name;
        # in-process, the very class is checked (a class redefined or reloaded
        # under the same name has other methods).
        self._classes = [(node.index, node.path, node.type, signature.leaf_expression(
            node.index, node.path)) for node in signature.containers
            if node.type.__module__ not in ("builtins", "collections")]
        self._direct = not bound and not self._classes  # nothing to do but check freshness

    def __call__(self, *args) -> tuple:
        """`(value, d0, d1, ...)` at `args` (see the class)."""
        if self._direct and self._fresh():  # the common call, in as few frames as can be
            return self._function(*args)
        if not self._bound:
            return self._run(args)
        value, *gradients = self._run(self._bound + args)
        return (value, *gradients[len(self._bound):])

    def _run(self, full: tuple):
        """The generated function on all its arguments, once nothing it
        folded from outside has changed and its classes are the very ones."""
        self.require_fresh()
        for index, path, cls, expression in self._classes:
            try:
                found = type(full[index] if not path else get_path(full[index], path))
            except (AttributeError, LookupError, TypeError, IndexError):
                continue  # the generated code's own guards name what is missing
            if found is not cls and found.__qualname__ == cls.__qualname__:
                raise SignatureMismatch(
                    f"{self.__name__} was generated for {expression} of the class "
                    f"{cls.__module__}.{cls.__qualname__}; this one is another class of the "
                    "same name (redefined or reloaded?). Generate the gradient again.")
        return self._function(*full)

    def require_fresh(self) -> None:
        """Raise SignatureMismatch where something the code folded from outside
        its arguments (a global, a closure variable, a default) has changed."""
        stale = None if self._fresh() else first_stale(self._dependencies)
        if stale is not None:
            raise SignatureMismatch(
                f"{self.__name__} was generated when {stale.what} was {stale.shown}; it has "
                "changed since. Generate the gradient again (ys.simplegrad, or `yota-src gen`).")

    def save(self, path: str | os.PathLike) -> None:
        """Write the module to `path`, atomically (a reader never sees half a
        file; a symlink is written through). Importing it gives
        `grad_<name>`, with the primal's parameters, needing only NumPy.

        Raises `errors.UnsaveableError` where the code compares an argument
        with a live object (a lambda, a local function) that no file can hold.

        Example: `df.save("grad_loss.py")`, then `from grad_loss import grad_loss`.
        """
        loader.require_saveable(self._function)
        loader.write_atomic(path, self.source)

    def __str__(self) -> str:
        return self.source

    def __repr__(self) -> str:
        return f"<GradFunction {self.__name__}>"

    def _repr_html_(self) -> str:
        """Jupyter: the module's source, highlighted (display.py)."""
        return display.source_html(self.source)

    def _repr_markdown_(self) -> str:
        return display.source_markdown(self.source)


class Pullback(GradFunction):
    """The pullback `vjp` returns: `pullback(dvalue)` is the gradient of
    `sum(value * dvalue)` for each positional argument of f, at the arguments
    vjp was given (conventions as `grad`), as a tuple. `dvalue` is shaped like
    the value: a float array or float for each of its float leaves, None for
    the others (integers, strings).

    `.source` is a module whose `vjp_<name>(<f's parameters>, dout)` returns
    `(value, gradient per argument...)`; `.save(path)` writes it. It caches
    nothing and keeps the arguments vjp was given; calls raise as a
    `GradFunction`'s do.

    Example:

        >>> import numpy as np
        >>> import yota_src as ys
        >>> value, pullback = ys.vjp(lambda x: x ** 2, np.array([1.0, 2.0]))
        >>> pullback(np.array([1.0, 10.0]))
        (array([ 2., 40.]),)
    """

    def __init__(self, compiled: Compiled, args: tuple, n_bound: int):
        super().__init__(compiled, args)
        self._n_bound = n_bound

    def __call__(self, dvalue) -> tuple:
        """One gradient per positional argument of f (see the class)."""
        _, *gradients = self._run(self._bound + (dvalue,))
        return tuple(gradients[self._n_bound:])

    def __repr__(self) -> str:
        return f"<Pullback {self.__name__}>"


def compute(value: Any, g: GradientResult) -> tuple[Any, GradientResult]:
    """`ys.grad`'s value and gradients over Dask arrays, computed together:
    one `dask.compute`, so the data is read once for all of them (computing
    each alone would read it again each time).

    Returns `(value, g)` as `ys.grad` does, with NumPy arrays and numbers
    for Dask's lazy ones; anything already computed comes back as it is.
    Caches nothing. Raises what computing the graph raises, and ImportError
    where Dask is not installed.

    Example:

        >>> import dask.array as da
        >>> import numpy as np
        >>> import yota_src as ys
        >>> def loss(w, X):
        ...     return np.mean((X @ w) ** 2)
        >>> X = da.from_array(np.arange(6.0).reshape(3, 2), chunks=2)
        >>> value, g = ys.compute(*ys.grad(loss, np.ones(2), X, wrt="w"))
        >>> print(round(float(value), 4), g[0])
        35.6667 [30.66666667 40.66666667]
    """
    import dask  # (only where Dask arrays were differentiated: dask is installed)

    value, gradients = dask.compute(value, tuple(g))
    return value, GradientResult(gradients, g._compiled)
