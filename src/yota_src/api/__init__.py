"""The API stage: the functions a user calls, `import yota_src as ys`.

Its modules, each importing only those above it in this list:

- user_facing.py: errors raised from the user's call and line;
- arguments.py: the function, its arguments and the options, checked;
- loss.py: what a differentiated function must return;
- results.py: the compiled code, and the results that hold it;
- unrolling.py: the first stage started on traced arguments;
- transform_tapes.py: a transform's gradient tape cut to its result;
- pipeline.py: `build`, the driver that runs the stages in order;
- cache.py: `ys.grad`'s store, the one cache of compiled gradients;
- gradients.py: `grad`, `simplegrad`, `vjp`, `trace`, `update`, `diffrule`
  (`nodiff` is the rule registry's own, core/registry.py);
- transform_wrappers.py, transforms.py: `hvp`, `hessian`, `jvp`,
  `jacobian`, `derivative`;
- finite_differences.py: `check_grad`, `numerical_gradient`;
- nested_derivatives.py: a derivative called inside a traced function.

Every other stage is a pure function of its inputs. The trace stage cannot
import this one, so a derivative called inside a traced function reaches
it through a hook, installed here whenever the API is imported.
"""

from yota_src.api import nested_derivatives
from yota_src.api.finite_differences import check_grad, numerical_gradient
from yota_src.api.gradients import diffrule, grad, simplegrad, trace, update, vjp
from yota_src.api.results import GradFunction, GradientResult, Pullback, compute
from yota_src.api.transforms import derivative, hessian, hvp, jacobian, jvp
from yota_src.core.registry import nodiff

__all__ = ["grad", "simplegrad", "compute", "vjp", "jvp", "hvp", "hessian", "jacobian",
           "derivative", "trace", "update", "check_grad", "diffrule", "nodiff", "GradientResult",
           "GradFunction", "Pullback", "numerical_gradient"]

nested_derivatives.install()  # ys.grad inside a traced function: the interpreter asks here
