"""Adjoint templates, one module per family, shipped as `yota_src.templates`.

Importing this package registers every template with `yota_src.rules`.
"""

from . import (  # noqa: F401
    constructors,
    elementwise,
    linalg,
    nondiff,
    numerical,
    operators,
    random,
    reductions,
    shape,
)
