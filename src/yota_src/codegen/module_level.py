"""What the module defines above its function, gathered while the guards
and statements are written, and laid out by module.py."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ModuleLevel:
    """The module-level names the function reads besides its imports and
    dtypes (spelling.py keeps those), and the objects an in-process loader
    binds to them (`live`: name -> value)."""

    errors: set[str] = field(default_factory=set)  # SignatureMismatch, ControlFlowChanged
    constants: list[str] = field(default_factory=list)  # arrays the function reads
    identities: list[str] = field(default_factory=list)  # objects compared by identity
    unreachable: list[str] = field(default_factory=list)  # large arrays no import reaches
    live: dict[str, object] = field(default_factory=dict)
