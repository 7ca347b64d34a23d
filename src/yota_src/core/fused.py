"""An elementwise expression NumExpr evaluates in one pass over memory.

NumPy makes one pass over memory, and one new array, per operation:
`1 / (1 + np.exp(-x))` reads and writes a million elements four times.
NumExpr compiles the expression once and evaluates it blockwise, each block
in cache, on all cores. `ys.grad`'s code, where the optional `numexpr` is
installed, evaluates chains of elementwise operations on large arrays this
way (passes/fuse.py): `numexpr.evaluate("1 / (1 + exp(-x))", {"x": x})`.
"""

from __future__ import annotations


class Fused:
    """The function of one fused expression: `text` with `{0}`, `{1}`, ...
    standing for its operands, which codegen names (`x`, `t3`) in the text
    and the dictionary it passes."""

    def __init__(self, text: str):
        self.text = text
        self.__name__ = "evaluate"

    def __call__(self, *operands, out=None):
        import numexpr  # an optional extra: only code made where it is installed calls it

        names = [f"a{index}" for index in range(len(operands))]
        return numexpr.evaluate(self.text.format(*names), dict(zip(names, operands)), out=out)

    def __repr__(self) -> str:
        return f"Fused({self.text!r})"
