"""The work arrays a call writes its large temporaries into
(passes/work_arrays.py): sets of arrays kept at module level from call to
call, each call taking a free set at its start and giving it back at its
return, so concurrent calls never share one."""

from __future__ import annotations

import ast

from yota_src.codegen.layout import fitted
from yota_src.codegen.names import Names
from yota_src.codegen.spelling import Speller
from yota_src.ir.tape import Call


class WorkArrays:
    """The slots a call's temporaries use, and the names of the set of work
    arrays a call holds (`work`), the function that takes one and the list
    of spare sets; named when the first slot is."""

    def __init__(self, names: Names):
        self.names = names
        self.work: str | None = None  # the name of a call's work arrays
        self.take: str | None = None
        self.spare: str | None = None
        self.slots: dict[int, tuple] = {}  # slot -> (shape, dtype)

    def slot(self, op: Call) -> ast.expr:
        """`work[0]`: where the value of a `work_array` op is held."""
        if self.work is None:
            self.work = self.names.fresh("work")
            self.take, self.spare = self.names.fresh("work_arrays"), self.names.fresh("spare_work")
        self.slots[op.args[0]] = (op.shape, op.dtype)
        return ast.Subscript(ast.Name(self.work), ast.Constant(op.args[0]))

    def taking(self) -> list[str]:
        """The statement that starts a call: `work = work_arrays()`."""
        return [f"{self.work} = {self.take}()"] if self.slots else []

    def giving_back(self) -> list[str]:
        """The statement before a call returns: `spare_work.append(work)`."""
        return [f"{self.spare}.append({self.work})"] if self.slots else []

    def helper(self, spell: Speller) -> list[str]:
        """The work arrays a call writes large temporaries into: each call
        takes a free set and gives it back, so concurrent calls never share one."""
        arrays = ", ".join(f"np.empty({shape!r}, {spell.guard_dtype(dtype)})"
                           for shape, dtype in (self.slots[slot]
                                                for slot in sorted(self.slots)))
        return ["# Arrays the large temporaries are written into, kept from call to call.",
                f"{self.spare} = []", "", "",
                f"def {self.take}():",
                '    """A free set of work arrays: a spare one, or a new one while all are in '
                'use."""',
                "    try:",
                f"        return {self.spare}.pop()",
                "    except IndexError:",
                *fitted(f"        return [{arrays}]"), "", ""]
