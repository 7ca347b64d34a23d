"""The gradient functions: `grad`, `simplegrad`, `vjp`, `trace`, and the
two that work beside them, `update` (apply a gradient) and `diffrule`
(register a rule).

`grad` is the one that caches (cache.py): a training loop calls it every
step, and the common call runs the cached code after one check of the
arguments. The others generate the code each time they are called.
"""

from __future__ import annotations

import threading
import types
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from yota_src.api.arguments import (
    has_aux_option,
    loops_option,
    refuse_keywords,
    target,
    wrt_indices,
)
from yota_src.api.cache import GradientCache, make_check, other_path
from yota_src.api.pipeline import build, primal
from yota_src.api.results import Compiled, GradFunction, GradientResult, Pullback
from yota_src.api.user_facing import user_facing as _user_facing  # "_": pdoc hides it
from yota_src.core import registry
from yota_src.core.primitives import display_name, store_in_argument
from yota_src.core.values import ATTR, ITEM, get_path, set_path
from yota_src.errors import ControlFlowChanged, meant_for_user, without_internal_frames
from yota_src.ir.signature import signature_key
from yota_src.ir.tape import Call, Guard, Tape
from yota_src.tracing import array_library

_cache = GradientCache()  # the one cache of compiled gradients: ys.grad's
_checks = _cache.checks  # what every call reads, bound once
_FUNCTION = types.FunctionType


def grad(f: Callable, *args, dynamic: bool = False,
         wrt: int | str | Sequence[int | str] | None = None, loops: str = "roll",
         has_aux: bool = False, **keywords) -> tuple[Any, GradientResult]:
    """The value of the scalar `f(*args)` and its gradient for every
    positional argument.

    Returns `(value, g)`, `g` a `GradientResult`: `g[i]` is the gradient for
    argument `i` (an array or float shaped like it, a `{path: gradient}`
    dict for a struct, None where there is nothing to differentiate). `wrt`
    picks the arguments to differentiate, by position or parameter name;
    `loops` is as for `simplegrad`. With `has_aux`, `f` returns `(loss,
    aux)`, the value is that pair and `aux` comes back as computed. With
    `dynamic=True` a decision taken from the data (a branch, a shape, a
    random draw) may go another way than when the code was generated: that
    path is generated and cached too.

    Caches the generated gradient for the life of the process, per function
    and specialisation: the arguments' types, shapes and dtypes, the values
    of non-array arguments, `wrt`, `loops` and `has_aux`, and what the trace
    read from outside the arguments (globals, closure variables, defaults,
    class attributes, imported modules). A later call with the same kind of
    arguments runs the cached code only; rebinding something it read
    generates again, never answering from stale code. Its large
    temporaries are kept in work arrays between calls. A rule registered
    with `diffrule` after a gradient was cached does not change it.

    Raises:

    - `errors.SourceUnavailableError` where `f` has no readable source (a
      builtin, `exec`, `python -c`, the interactive prompt before Python 3.13);
    - `errors.UnsupportedSyntaxError`, `errors.NoDiffRuleError`,
      `errors.MutationError` for what cannot be differentiated, naming the
      user's file and line;
    - `errors.ControlFlowChanged` where the data takes a decision the other
      way than when the code was generated (without `dynamic`);
    - ValueError where `f` returns no scalar (a float or a size-1 array), or
      no `(loss, aux)` pair with `has_aux`;
    - TypeError for keyword arguments meant for `f`, a `wrt` of the wrong
      type or choosing an argument without floats, or arguments `f` cannot
      be called with; ValueError for a `wrt` naming no argument of `f`.

    Example:

        >>> import numpy as np
        >>> import yota_src as ys
        >>> def loss(w, x):
        ...     return np.sum((w * x) ** 2)
        >>> value, g = ys.grad(loss, np.array([1.0, 2.0]), np.array([3.0, 1.0]))
        >>> print(value, g[0], g[1])
        13.0 [18.  4.] [6. 8.]
    """
    __tracebackhide__ = True  # noqa: F841 - as user_facing's entry, inline: grad is called often
    try:
        if type(f) is _FUNCTION and wrt is None and loops == "roll" and has_aux is False \
                and not keywords:  # the call a training loop makes: nothing to work out
            fn, full_args, n_bound, options = f, args, 0, _DEFAULT_OPTIONS
        else:
            fn, full_args, n_bound, options = _call(f, args, wrt, loops, has_aux, keywords)
        variants = None
        for check, found in _checks.get(fn, ()):  # the first check the arguments pass
            if check(options, full_args):
                variants = found
                break
        skipped = None
        if variants is not None and len(variants) == 1:  # the common hit, as _cache.find does
            compiled = variants[0]
            if compiled.quick and compiled.fresh() and not (dynamic and compiled.holds_output):
                try:
                    result = compiled.function(*full_args)
                    return result[0], GradientResult(result[n_bound + 1:], compiled)
                except ControlFlowChanged as error:
                    if not dynamic:
                        raise other_path(error, compiled) from None
                    skipped = id(compiled)  # another path: traced, not run again
        return _grad(fn, full_args, n_bound, options, variants, skipped, len(args), dynamic,
                     wrt, loops, has_aux)
    except Exception as error:
        if not meant_for_user(error):
            raise
        raise without_internal_frames(error) from error.__cause__  # yota-src's frames left out


def _call(f: Callable, args: tuple, wrt, loops: str, has_aux: bool, keywords: dict) -> tuple:
    """(the function, all its arguments, how many are bound, the call's options)."""
    if keywords:
        refuse_keywords("grad", keywords)
    if type(f) is _FUNCTION:
        fn, full_args, n_bound = f, args, 0
    else:
        fn, full_args, n_bound = target(f, args)
    options = _DEFAULT_OPTIONS if n_bound == 0 and wrt is None and loops == "roll" \
        and has_aux is False else (n_bound, _hashable_wrt(wrt), loops, has_aux_option(has_aux))
    return fn, full_args, n_bound, options


def _grad(fn: Callable, full_args: tuple, n_bound: int, options: tuple, variants, skipped,
          n_args: int, dynamic: bool, wrt, loops: str, has_aux: bool) -> tuple[Any, GradientResult]:
    """`grad` from the cache's full key, tracing where nothing applies;
    `skipped`, the id of a variant already run for this call, is not run again."""
    tried = {skipped} if skipped is not None else set()
    wrt_args = wrt_indices(wrt, n_args, n_bound, fn, full_args)
    loops = loops_option(loops)
    has_aux = has_aux_option(has_aux)
    key = (fn, signature_key(full_args), wrt_args, loops, has_aux)
    # the check describes the arguments as they come: the code may write into them
    check = make_check(options, full_args) \
        if variants is None and options[1] is not _NO_KEY else None
    compiled, result = _cache.find(key, full_args, dynamic, tried)
    if compiled is None:
        with _cache.building(key):  # concurrent first calls: one traces, the others use its result
            compiled, result = _cache.find(key, full_args, dynamic, tried)
            kind = (fn, signature_key(full_args, shapes=False), wrt_args, loops, has_aux)
            if compiled is None and not dynamic:  # other sizes than before: served as they are?
                compiled, result = _cache.find_general(kind, full_args)
                if compiled is not None:
                    _cache.add(key, compiled)
            if compiled is None:
                compiled = _build_once(key, fn, full_args, wrt_args, loops, has_aux,
                                       sizes=kind in _cache.seen and not dynamic)
                _cache.seen.add(kind)
                _cache.add(key, compiled)  # first: a rule the code calls may ask for it again
                if _serves_other_sizes(compiled):
                    _cache.add_general(kind, compiled)
                result = _first_call(compiled, full_args)
    if check is not None:
        _cache.remember(fn, check, key)
    return result[0], GradientResult(result[n_bound + 1:], compiled)


def _first_call(compiled, args: tuple):
    """The call of code just generated, whose data may still go another way:
    Dask arrays' first rows, which the code was traced on, need not decide
    as the whole data does."""
    try:
        return compiled.function(*args)
    except ControlFlowChanged as error:
        if compiled.generated_from.signature.library != "dask":
            raise
        raise other_path(error, compiled) from None


_NO_KEY = object()
_DEFAULT_OPTIONS = (0, None, "roll", False)  # one object, so that checks test identity first


def _hashable_wrt(wrt):
    """`wrt` as part of a cache check (a list of names is as good as a tuple),
    or _NO_KEY for one that is not made of indices and names."""
    if wrt is None or type(wrt) in (int, str):
        return wrt
    if type(wrt) in (list, tuple) and all(type(item) in (int, str) for item in wrt):
        return tuple(wrt)
    return _NO_KEY


_tracing = threading.local()  # the cache keys this thread is generating code for


def _build_once(key, fn: Callable, args: tuple, wrt_args, loops: str,
                has_aux: bool, sizes: bool = False) -> Compiled:
    """`build` for ys.grad, refusing a request for the very gradient being
    generated (a rule that calls ys.grad of the function it is used in runs
    while that function is traced), which would trace it again without end.
    `sizes`: the function was called with other sizes before (a last, smaller
    minibatch): made to read sizes at run time, for every size it serves."""
    keys = _tracing.__dict__.setdefault("keys", set())
    if key in keys:
        raise RecursionError(
            f"ys.grad({display_name(fn)}, ...) was called while its gradient for these "
            "arguments was being generated (from a rule or a function it calls): call it "
            "once before, so that the code is ready, or differentiate a function that does "
            "not call itself this way")
    keys.add(key)
    try:
        if sizes:
            return build(fn, args, wrt_args, loops, work_arrays=False, has_aux=has_aux)
        # the first sizes it is called with: made for them (its work arrays are the
        # example's sizes), as a training loop calls it with them again and again
        compiled = build(fn, args, wrt_args, loops, work_arrays=True, has_aux=has_aux,
                         sizes=False)
        if _counts_guarded(compiled.generated_from):
            # a mask's count is data: the next batch of this shape selects another
            # number, which a module reading counts at run time serves
            general = build(fn, args, wrt_args, loops, work_arrays=False, has_aux=has_aux)
            if not _counts_guarded(general.generated_from):
                return general
        return compiled
    finally:
        keys.discard(key)


def _serves_other_sizes(compiled: Compiled) -> bool:
    """A variant that reads sizes at run time, which another batch size may
    use before anything is traced: one that draws no random numbers, shows
    no output and writes into no argument (its checks run before any work)."""
    tape = compiled.generated_from
    facts = tape.signature.dims
    return facts is not None and bool(facts.free()) and not compiled.draws \
        and not compiled.holds_output and not any(
            isinstance(op, Call) and op.fn is store_in_argument for op in tape.ops)


def _counts_guarded(tape) -> bool:
    """Whether the code checks a size the data decide (a mask's count)."""
    facts = tape.signature.dims
    return any(isinstance(op, Guard) and op.convert is np.shape
               and not op.read_at_run_time(facts) for op in tape.ops)


@_user_facing
def simplegrad(f: Callable, *args, wrt: int | str | Sequence[int | str] | None = None,
               loops: str = "roll", has_aux: bool = False, **keywords) -> GradFunction:
    """A gradient function for arguments like `args`, with readable source.

    Returns a `GradFunction` `df`: `df(*args)` gives `(value, d0, d1, ...)`
    (`((loss, aux), d0, ...)` with `has_aux`), `df.source` the module and
    `df.save(path)` writes it. `wrt` picks the arguments that get gradient
    code, by position or parameter name; the others give None.
    `loops="roll"` writes a run of iterations that do the same work as a
    loop (and its reversed loop in the backward pass); `"unroll"` writes
    straight-line code.

    Caches nothing: each call generates the code (`grad` is the cached
    form). The code is specialised to the shapes, dtypes and non-array
    values of `args`; calling it with others raises
    `errors.SignatureMismatch`.

    Raises what `grad` raises while generating, and ValueError for another
    `loops`.

    Example:

        >>> import numpy as np
        >>> import yota_src as ys
        >>> def loss(w, x):
        ...     return np.sum((w * x) ** 2)
        >>> df = ys.simplegrad(loss, np.ones(2), np.ones(2), wrt="w")
        >>> value, dw, dx = df(np.array([1.0, 2.0]), np.array([3.0, 1.0]))
        >>> print(value, dw, dx)
        13.0 [18.  4.] None
        >>> "def grad_loss(w, x):" in df.source
        True
    """
    refuse_keywords("simplegrad", keywords)
    fn, full_args, n_bound = target(f, args)
    compiled = build(fn, full_args, wrt_indices(wrt, len(args), n_bound, fn, full_args),
                     loops_option(loops), has_aux=has_aux_option(has_aux))
    return GradFunction(compiled, full_args[:n_bound])


@_user_facing
def vjp(f: Callable, *args, wrt: int | str | Sequence[int | str] | None = None,
        loops: str = "roll", **keywords) -> tuple[Any, Pullback]:
    """The value of `f(*args)` and its vector-Jacobian product at `args`.

    Returns `(value, pullback)`: the value may be an array, a float, or
    tuples, lists and dicts of them; `pullback(dvalue)` (a `Pullback`) gives
    one gradient per positional argument. `wrt` and `loops` are as for
    `simplegrad`.

    Caches nothing: each call generates the code again (keep the pullback
    to reuse it).

    Raises:

    - `errors.SourceUnavailableError`, `errors.UnsupportedSyntaxError`,
      `errors.NoDiffRuleError`, `errors.MutationError`: as `grad`;
    - ValueError where the value holds no float that depends on the
      arguments, or holds an object the generated code cannot return;
    - TypeError for keyword arguments meant for `f`, or a `wrt` of the
      wrong type; ValueError for a `wrt` naming no argument of `f`.

    Example:

        >>> import numpy as np
        >>> import yota_src as ys
        >>> def f(x):
        ...     return {"sq": x ** 2, "sum": np.sum(x)}
        >>> value, pullback = ys.vjp(f, np.array([1.0, 2.0]))
        >>> pullback({"sq": np.array([1.0, 1.0]), "sum": 1.0})
        (array([3., 5.]),)
    """
    refuse_keywords("vjp", keywords)
    array_library.refuse_dask("ys.vjp", args)
    fn, full_args, n_bound = target(f, args)
    compiled = build(fn, full_args, wrt_indices(wrt, len(args), n_bound, fn, full_args),
                     loops_option(loops), pullback=True)
    return compiled.value, Pullback(compiled, full_args, n_bound)


@_user_facing
def trace(f: Callable, *args) -> tuple[Any, Tape]:
    """The value of `f(*args)` and the tape of primitive operations behind it.

    Returns `(value, tape)`, `tape` a `Tape`: `print(tape)` lists one
    operation per line, `tape.play(*args)` runs it again and
    `tape.compile()` makes it a Python function. Random draws are those of
    one call of `f` (they are not put back). Caches nothing.

    Raises `errors.SourceUnavailableError`, `errors.UnsupportedSyntaxError`
    and `errors.MutationError` as `grad` does; nothing needs a rule.

    Example:

        >>> import numpy as np
        >>> import yota_src as ys
        >>> def f(x):
        ...     return np.sum(np.tanh(x))
        >>> value, tape = ys.trace(f, np.zeros(3))
        >>> print(str(tape).splitlines()[0])
        %1 = input x  :: float64 (3,)
    """
    fn, full_args, _ = target(f, args)
    array_library.refuse_dask("ys.trace", full_args)  # (it would give the sample's value)
    return primal(fn, full_args)


def diffrule(fn: Callable, wrt: str | None = None,
             expr: str | None = None) -> Callable[[Callable], Callable] | None:
    """Register the derivative of `fn`, which becomes a primitive: calls to
    it are recorded, not inlined, and the generated code calls it.

    `diffrule(fn, "x", "y * (1 - y) * dy")` is the expression form, in which
    `y` is fn's result, `dy` the incoming gradient and fn's parameters its
    inputs; it returns None. `@diffrule(fn)` on a function `(dy, y, <fn's
    parameters>)` that assigns `d<param>` is the template form, as in
    `templates/`: it returns the decorator, which returns the template
    unchanged. A template with `**kw` receives the call's keyword arguments.

    Caches: the rule goes into the process-wide registry, replacing an
    earlier rule for the same parameter; gradients `grad` cached before keep
    the code they were generated with.

    Raises TypeError where only one of `wrt` and `expr` is given, `fn` has no
    parameter `wrt` or no inspectable signature, a parameter is named `y`
    or `dy`, or a template's parameters after `(dy, y)` are not fn's (by
    name, in fn's order); SyntaxError for an expression that does not parse. A rule that
    leaves out an input it receives data for raises
    `errors.NoDiffRuleError` when it is used.

    Example:

        >>> import numpy as np
        >>> import yota_src as ys
        >>> def logistic(x):
        ...     return 1.0 / (1.0 + np.exp(-x))
        >>> ys.diffrule(logistic, "x", "y * (1 - y) * dy")
        >>> @ys.diffrule(logistic)  # the same rule, as a template
        ... def logistic_rule(dy, y, x):
        ...     dx = y * (1 - y) * dy

    Code that calls `logistic` then differentiates through the rule, and
    its generated module calls `logistic` once (a module-level function of
    an importable module, which the generated code imports).
    """
    if wrt is None and expr is None:
        register = registry.adjoint(fn)

        def checked(template: Callable) -> Callable:
            registry.check_template_parameters(fn, template)
            return register(template)
        return checked
    if wrt is None or expr is None:
        raise TypeError("diffrule(fn, wrt, expr) needs both the parameter name and the expression")
    registry.expression_rule(fn, wrt, expr)
    return None


def update(m: Any, gm: Any, fn: Callable[[Any, Any], Any]) -> Any:
    """Apply `fn(old, grad)` at every path of the gradient dict `gm` (or to
    the array `m` itself, where `gm` is an array): Yota's `update!`.

    Returns `m`, changed in place where the container allows it (arrays,
    dicts, lists, objects); where an immutable container (a tuple,
    namedtuple or frozen dataclass) is on a path, a rebuilt one: use the
    value it returns. Caches nothing.

    Raises what `fn` raises, and KeyError, IndexError or AttributeError for a
    path `m` does not have.

    Example:

        >>> import numpy as np
        >>> import yota_src as ys
        >>> params = {"W": np.ones(2), "b": 0.5}
        >>> ys.update(params, {("W",): np.array([1.0, 2.0])}, lambda old, g: old - 0.1 * g)
        {'W': array([0.9, 0.8]), 'b': 0.5}
    """
    if not isinstance(gm, dict):
        new = fn(m, gm)
        if isinstance(m, np.ndarray) and m.flags.writeable and np.shape(new) == m.shape:
            m[...] = new
            return m
        return new
    for path, g in gm.items():
        steps = _steps(m, path)
        m = set_path(m, steps, fn(get_path(m, steps), g))
    return m


def _steps(root, path: tuple) -> tuple:
    """A user path (keys only) -> steps that say attribute or item."""
    steps, node = [], root
    for key in path:
        is_item = isinstance(node, (dict, list)) or (
            isinstance(node, tuple) and not (hasattr(node, "_fields") and isinstance(key, str)))
        steps.append((ITEM if is_item else ATTR, key))
        node = node[key] if is_item else getattr(node, key)
    return tuple(steps)
