"""One module for every size: checked by making it again at other sizes.

A module whose sizes are read at run time (ir/dims.py) must not depend on
the example's sizes anywhere: not in a rule that decided something from a
size without saying so, not in a pass that wrote a shape as a number. So
`build` makes it twice: at the example's sizes and at a *probe*, the same
arguments with every free size changed (to a value no size of the example
has; sizes equal in the example stay equal, as an index may rely on it).
Where two free sizes are equal in the example, a second probe gives each
its own value, so that no pass can have taken one for the other; a probe
the function cannot run at (an index taken from one size into another)
proves nothing either way and is passed over. Both modules are written in
terms of the sizes' names, so a module that serves every size reads the
same at each probe; where they differ, something followed the example's
sizes, and the module is made again with every size fixed (the
specialisation it was before sizes were values). Slower to make, never
wrong at another size.
"""

from __future__ import annotations

import math
import operator

import numpy as np

from yota_src.core.values import Rows, is_array, rebuild, with_rows
from yota_src.ir.dims import DimFacts, Symbol

SMALL = 17  # where a small probe starts: above LARGE, a count a small probe gives
LARGE = 16  # a size above which a small probe is tried first (a long loop is cheaper so)


def probe_arguments(args: tuple, facts: DimFacts, apart: bool = False,
                    small: bool = False, counts: frozenset = frozenset(),
                    scaled: bool = False, rows: bool = False) -> tuple | None:
    """`args` with each free size changed, each array's data repeated along
    the axes that change, so its values stay those of the example (labels
    index the same classes); None where no size is free (or, `apart`, where
    no two free sizes are equal in the example). Sizes equal in the example
    stay equal (the code may rely on it unsaid: an index into one axis taken
    from another's length); `apart`, each free size gets a value of its own,
    so that nothing can follow a coincidence of the example's sizes.
    `small`: each size above LARGE becomes a small one (from SMALL up), and
    each trip count read at run time (`counts`: the int arguments the code
    takes a loop's count from) above LARGE becomes LARGE, so that a loop of
    10,000 steps is probed over a few; None where none is that large.
    `scaled`: each free size times the least factor that gives no size of
    the example, which keeps sizes the code relates without saying so
    (`np.concatenate([h, x])` against weights of `H + D` rows, gates packed
    as `4 * H` columns), where adding to each size breaks them. `rows`: a list
    of arrays alike is one leaf, the rows of one array (values.Rows), whose
    length is a size like the others."""
    derived = _derived(facts)
    free = [symbol for symbol in facts.free() if symbol not in derived]
    values = [facts.values[symbol] for symbol in free]
    long = [index for index in counts if index < len(args) and type(args[index]) is int
            and args[index] > LARGE]
    if not free or apart and len(set(values)) == len(values) \
            or small and max(values) <= LARGE and not long:
        return None
    taken = set(facts.values.values())
    sizes: dict[Symbol, int] = {}
    by_value: dict[int, int] = {}
    least = SMALL
    factor = next(k for k in range(2, 1 << 20)  # (a scaled probe's)
                  if not {facts.values[symbol] * k for symbol in free} & taken) if scaled else 1
    for symbol in sorted(free, key=lambda symbol: facts.values[symbol]):
        value = facts.values[symbol]
        if scaled:
            sizes[symbol] = value * factor
            continue
        if value in by_value and not apart:
            sizes[symbol] = by_value[value]
            continue
        size = value + 1
        if small and value > LARGE:
            size = least
        while size in taken:
            size += 1
        sizes[symbol] = by_value[value] = size
        taken.add(size)
        least = size + 1

    for symbol, terms in derived.items():  # in the order decided: each from those before
        sizes[symbol] = sum(c * math.prod(sizes.get(s, facts.values[s]) for s in key)
                            for key, c in terms.items())
        if sizes[symbol] < 0:
            return None

    def resized(index: int):
        def leaf(path, value):
            if isinstance(value, Rows):
                return list(leaf(path, value.array))
            if not is_array(value) or isinstance(value, np.generic):
                return value
            for axis in range(np.ndim(value)):
                symbol = Symbol(index, path, axis)
                if symbol in facts.values and facts.find(symbol) in sizes:
                    wanted = sizes[facts.find(symbol)]
                    value = np.take(value, np.arange(wanted) % value.shape[axis], axis=axis)
            return value
        return leaf

    return tuple(LARGE if small and index in long else
                 rebuild(with_rows(arg) if rows else arg, resized(index))
                 for index, arg in enumerate(args))


def _derived(facts: DimFacts) -> dict:
    """Sizes the code checks equal to an expression of others (`W.shape[0] ==
    D + H + 1`, a weight for a join): {symbol: the expression's terms}. A
    probe computes them from the sizes it chooses, as a caller's arguments
    would have them, rather than choosing them apart."""
    derived: dict = {}
    for decision in facts.decisions:
        if decision.op is not operator.eq or not decision.truth:
            continue
        difference = facts.terms(decision.left - decision.right)
        alone = [key[0] for key, c in difference.items() if len(key) == 1 and c in (1, -1)
                 and key[0] not in derived and isinstance(key[0], Symbol)
                 and sum(key[0] in other for other in difference) == 1]
        if not alone:
            continue
        symbol = alone[-1]  # (the later made: a weight's size, from the data's)
        sign = difference[(symbol,)]
        derived[symbol] = {key: -c * sign for key, c in difference.items() if key != (symbol,)}
    return derived
