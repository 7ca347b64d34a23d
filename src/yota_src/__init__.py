"""yota-src: reverse-mode automatic differentiation of NumPy code by source
transformation, producing gradient modules people can read and ship."""

from yota_src import codegen, errors
from yota_src.api import (
    GradFunction,
    GradientResult,
    Pullback,
    check_grad,
    compute,
    derivative,
    diffrule,
    grad,
    hessian,
    hvp,
    jacobian,
    jvp,
    nodiff,
    simplegrad,
    trace,
    update,
    vjp,
)
from yota_src.ir.tape import Tape
from yota_src.version import __version__ as __version__

Tape.compiler = staticmethod(codegen.compile_forward)  # the pipeline's last stage, wired here

__all__ = ["grad", "simplegrad", "vjp", "jvp", "hvp", "hessian", "jacobian", "derivative",
           "trace", "update", "compute", "check_grad", "diffrule", "nodiff", "errors",
           "GradientResult", "GradFunction", "Pullback", "Tape"]
