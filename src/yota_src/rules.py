"""What a rule author imports: the one module of yota-src a template needs
(autograd's `extend`).

    from yota_src.rules import adjoint, is_static

    @adjoint(np.tanh)
    def tanh(dy, y, x):
        dx = dy * (1 - y * y)

A template is a plain Python function `template(dy, y, *primal_params)`
whose body assigns `d<param>` for each differentiable input; it runs on the
forward values, so `is_static` tells a plain Python value from one the
trace follows, and `primitives` holds the pseudo-primitives a template may
record (`primitives.index_add`, `primitives.T`). The built-in templates in
`yota_src.templates` import nothing else of ours. Registering one is
process-wide; `ys.diffrule` and `ys.nodiff` are the same registry seen from
the public API.
"""

from yota_src.core import primitives
from yota_src.core.registry import (
    OPTIONAL_FAMILIES,
    adjoint,
    declarations,
    is_nondifferentiable,
    nodiff,
    nondifferentiable,
    parameter_names,
    refused,
    registered,
    template_for,
)
from yota_src.tracing.traced import is_static

__all__ = ["adjoint", "nondifferentiable", "nodiff", "refused", "is_static", "primitives",
           "parameter_names", "template_for", "is_nondifferentiable", "registered",
           "declarations", "OPTIONAL_FAMILIES"]
