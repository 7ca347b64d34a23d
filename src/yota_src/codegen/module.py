"""The module as a whole: its docstring (what the code is specialised to),
its imports, the module-level names its function reads, the function (and,
where a parameter would hide a name the body reads, an entry point that
hands its arguments to the body), and the helper data guards raise through.

`ModuleWriter` joins the parts that write the module, each holding the
state of its job: the names (names.py), the spelling (spelling.py), the
guards (guards.py), large arrays read from outside (outside_reads.py), work
arrays (work_arrays.py) and the body's statements (statements.py); lines
are fitted to the line limit by layout.py.
"""

from __future__ import annotations

import builtins
import symtable
import textwrap

from yota_src.codegen.dimensions import Dimensions
from yota_src.codegen.formatter_spelling import formatter_spelled
from yota_src.codegen.guards import Guards
from yota_src.codegen.layout import LINE_LIMIT, definition, docstring_body, fitted
from yota_src.codegen.module_level import ModuleLevel
from yota_src.codegen.names import RESERVED, Names, function_name
from yota_src.codegen.outside_reads import LITERAL_LIMIT, OutsideReads
from yota_src.codegen.spelling import Speller
from yota_src.codegen.statements import StatementWriter
from yota_src.codegen.work_arrays import WorkArrays
from yota_src.core.values import describe_value
from yota_src.ir.tape import Tape
from yota_src.tracing import array_library

# Formatters run over a project (ruff format, black) leave the module as written,
# whatever line length they are set to: `yota-src check` compares it byte for byte.
FORMATTERS_OFF = "# fmt: off"

_WHAT = {"gradient": "Gradient", "vjp": "Vector-Jacobian product", "forward": "Forward pass",
         "hvp": "Hessian-vector product", "jvp": "Jacobian-vector product"}


def numpy_module(tape: Tape, kind: str) -> tuple[str, dict]:
    """`generate`'s module as written for NumPy.

    A parameter may be called like something the code needs (`np`, `len`,
    `type`): the function keeps the user's parameters, and where one would
    hide a name its body reads, it hands its arguments to a body function
    that takes that parameter under a fresh name.
    """
    writer = ModuleWriter(tape, kind)
    text = writer.module()
    bound = _module_names(text)  # parsed once: a long unrolled module takes a while
    suspects = frozenset(index for index, param in enumerate(tape.signature.params)
                         if hasattr(builtins, param) or param in bound)
    if suspects:
        renamed = ModuleWriter(tape, kind, suspects)
        renamed_text = renamed.module()
        reads = _global_reads(renamed_text, renamed.body_name)
        needed = frozenset(index for index in suspects if tape.signature.params[index] in reads)
        if needed == suspects:
            writer, text = renamed, renamed_text
        elif needed:
            writer = ModuleWriter(tape, kind, needed)
            text = writer.module()
    return text, writer.module_level.live


class ModuleWriter:
    """Writes one module for a tape: `module()` gives its text, and
    `module_level.live` the objects an in-process loader binds in it."""

    def __init__(self, tape: Tape, kind: str, renamed: frozenset = frozenset()):
        self.tape, self.kind, self.sig = tape, kind, tape.signature
        self.name = function_name(tape, kind)
        self.names = Names(tape, kind,
                           set(self.sig.params) | RESERVED | {self.name} | set(dir(builtins)))
        # The body's names for the parameters: the user's, or a fresh one for
        # a parameter that would hide a name the body reads (see `numpy_module`).
        self.params = [self.names.fresh(param) if index in renamed else param
                       for index, param in enumerate(self.sig.params)]
        self.body_name = self.names.fresh(f"{self.name}_body") if renamed else self.name
        self.module_level = ModuleLevel()
        self.spell = Speller(self.sig, self.params, self.names)
        self.dims = self.spell.dims = Dimensions(self.sig.dims, self.spell.path, self.names,
                                                 len(self.sig.params), tape.ops)
        self.guards = Guards(tape, self.name, self.params, self.names, self.spell,
                             self.module_level)
        self.guards.dims = self.dims
        self.outside = OutsideReads(self.sig, self.name, self.spell, self.guards,
                                    self.module_level)
        self.work = WorkArrays(self.names)
        self.statements = StatementWriter(tape, kind, self.name, self.params, self.names,
                                          self.spell, self.guards, self.outside, self.work,
                                          self.module_level)

    def module(self) -> str:
        """The module's text: the guards and the body are written first,
        since they decide what the module must import and define."""
        self.dims.name_in_order(self.guards.array_leaves())  # N, M, ... in argument order
        body = self.statements.body()  # finds the outside reads and the sizes it reads
        decisions = self.dims.decisions() if self.dims.active else []
        guards = self.guards.signature_guards() + self.guards.size_guards(decisions)
        self.dims.require_bound()
        body = guards + self.outside.lines + self.work.taking() + body
        imports = sorted(self.spell.imports, key=lambda line: (line != "import numpy as np", line))
        definitions = formatter_spelled("\n".join(self.definitions())).split("\n")
        code = [*definitions, "", *definition(self.body_name, self.params)]
        code += [piece for line in body
                 for piece in (fitted("    " + formatter_spelled(line)) if line else [""])]
        if not _uses_name("\n".join(code), "np"):
            imports.remove("import numpy as np")
        lines = [FORMATTERS_OFF, self.docstring(), *imports, *([""] if imports else [])]
        code_start = len(lines) + len(definitions)  # where an entry point goes
        lines += code
        if self.body_name != self.name:
            lines[code_start:code_start] = ["", *self.entry_point(), ""]
        # the helpers after the function: a reader meets the gradient first
        helpers = []
        if self.guards.described:
            helpers += ["", "", *self.guards.mismatch_helper()]
        if self.guards.stack:
            helpers += ["", "", *self.guards.stack_helper()]
        if self.guards.facts or self.guards.size_facts:
            helpers += ["", "", *self.guards.other_path_helper()]
        return "\n".join(lines) + ("\n" if helpers else "") \
            + formatter_spelled("\n".join(helpers) + "\n")

    def definitions(self) -> list[str]:
        """The module-level names the function reads, each kind under a
        comment that says why it is there."""
        lines = []
        if self.module_level.errors:
            names = " = ".join(sorted(self.module_level.errors, reverse=True))
            lines += ["# Raised when called outside the specialisation above; "
                      f"{'both are' if len(self.module_level.errors) > 1 else 'it is'} ValueError.",
                      f"{names} = ValueError", ""]
        work = self.work.helper(self.spell) if self.work.slots else []  # first: it names dtypes
        if self.spell.guard_dtypes:
            made = sorted(self.spell.guard_dtypes.items(), key=lambda item: item[0] != "np.ndarray")
            what = "type and dtypes" if "np.ndarray" in self.spell.guard_dtypes else "dtypes"
            lines += [f"# The {what} the guards compare with, made once.",
                      *(f"{name} = {spelled}" if spelled == "np.ndarray" else
                        f"{name} = {spelled if '(' in spelled else f'np.dtype({spelled})'}"
                        for spelled, name in made), ""]
        if self.module_level.constants:
            lines += ["# Arrays the primal read from its globals and closures, as they were.",
                      *self.module_level.constants, ""]
        if self.module_level.identities:
            lines += ["# Objects the arguments held, compared by identity: only the process that",
                      "# generated this module has them, so it cannot be saved and run elsewhere.",
                      *self.module_level.identities, ""]
        lines += work
        if self.module_level.unreachable:
            lines += ["# Arrays too large to write here, which no import reaches: only the process",
                      "# that generated this module has them, so it cannot be saved and run",
                      "# elsewhere.",
                      *self.module_level.unreachable, ""]
        if self.guards.fact_lines:
            lines += ["# Decisions the data took more than once for the example; a call whose",
                      "# data take another path raises ControlFlowChanged naming them.",
                      *self.guards.fact_lines, ""]
        return lines

    def entry_point(self) -> list[str]:
        """The function with the user's parameters, where one of them would
        hide a name the body reads: it hands its arguments to the body."""
        renamed = [(user, body) for user, body in zip(self.sig.params, self.params)
                   if user != body]
        hidden = _listed([user for user, _ in renamed])
        taken = _listed([f"{user} as {body}" for user, body in renamed])
        params = ", ".join(self.sig.params)
        said = (f"The code below reads the name{'s' if len(renamed) > 1 else ''} {hidden} "
                f"for itself, so it takes {taken}.")
        return [*definition(self.name, list(self.sig.params)),
                *textwrap.wrap(said, LINE_LIMIT, initial_indent="    # ",
                               subsequent_indent="    # ", break_on_hyphens=False),
                *fitted(f"    return {self.body_name}({params})")]

    def docstring(self) -> str:
        """What the module computes, for what it is specialised, the facts of
        the data and what it read from outside the arguments."""
        sig = self.sig
        what = _WHAT[self.kind]
        qualified = f"{sig.module}.{sig.qualname}" if sig.module else sig.qualname
        paragraphs = [f"{what} of {qualified} (source sha1 {sig.source_hash})."]
        device = " (CuPy arrays, on the device)" if sig.library == array_library.CUPY else ""
        if sig.library == array_library.DASK:
            lazy = [sig.leaf_expression(index, path) for index, path in sig.dask_leaves()]
            device = f" ({', '.join(lazy)}: Dask arrays, the results lazy)"
        served = sig.describe(self.tape.free_counts, self.dims.shape_text)
        paragraphs.append(f"Specialised to{device}: {served or 'no arguments'}.")
        stated = []
        for op, fact in self.guards.facts.items():
            text = fact.text if fact.repeated else f"{op.loc.short} `{op.text}` " + (
                f"was {op.expected}" if op.convert is bool else
                f"gave {describe_value(op.expected)}")
            if text not in stated:
                stated.append(text)
        if stated:
            paragraphs.append("Data-dependent facts: " + "; ".join(stated) + ".")
        if sig.outside:
            arrays = ("small arrays are snapshots below, larger ones read at each call"
                      if self.outside.described else "arrays are snapshots below")
            paragraphs.append(f"Read from outside the arguments and frozen here ({arrays}): "
                              + "; ".join(sig.outside) + ".")
        if self.outside.described:
            paragraphs.append(
                f"Arrays from outside with more than {LITERAL_LIMIT} elements are not copied "
                "here: each call reads them from their modules, which must be importable, and "
                "checks their type, shape and dtype (an integer or boolean array's contents "
                "too, which the code was specialised to): "
                + "; ".join(self.outside.described) + ".")
        paragraphs.append("Generated by yota-src; edit the primal, not this file; formatters "
                          "keep off it.")
        text = "\n\n".join(textwrap.fill(p, 79, break_long_words=False,
                                         break_on_hyphens=False) for p in paragraphs)
        return f'"""{docstring_body(text)}\n"""'


# The module's text is read back through `symtable`, which compiles it in C:
# a Python syntax tree of a long unrolled module would take seconds and
# hundreds of megabytes.

def _uses_name(text: str, name: str) -> bool:
    """Whether the code reads or assigns the variable `name` (an import nobody
    uses is dead code)."""
    return any(symbol.is_referenced() or symbol.is_assigned()
               for table in _tables(symtable.symtable(text, "<generated>", "exec"))
               for symbol in [_symbol(table, name)] if symbol is not None)


def _module_names(text: str) -> set[str]:
    """The names a module's top-level statements bind (imports, assignments,
    functions)."""
    table = symtable.symtable(text, "<generated>", "exec")
    return {symbol.get_name() for symbol in table.get_symbols()
            if symbol.is_imported() or symbol.is_assigned()}


def _global_reads(text: str, function: str) -> set[str]:
    """The names the function `function` of a module reads from outside itself."""
    table = next(child for child in symtable.symtable(text, "<generated>", "exec").get_children()
                 if child.get_type() == "function" and child.get_name() == function)
    return {symbol.get_name() for scope in _tables(table) for symbol in scope.get_symbols()
            if symbol.is_global() and symbol.is_referenced()}


def _tables(table: symtable.SymbolTable) -> list[symtable.SymbolTable]:
    """A scope and every scope nested in it (functions, comprehensions)."""
    tables, pending = [], [table]
    while pending:
        scope = pending.pop()
        tables.append(scope)
        pending.extend(scope.get_children())
    return tables


def _symbol(table: symtable.SymbolTable, name: str) -> symtable.Symbol | None:
    try:
        return table.lookup(name)
    except KeyError:
        return None


def _listed(items: list[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"
