"""Adjoint templates, one module per family, shipped as `yota_src.templates`.

Importing this package registers every template with `yota_src.rules`.
"""

from . import constructors, elementwise, linalg, nondiff, operators, reductions, shape  # noqa: F401
