"""scipy.integrate: ODE solvers, whose gradient is refused.

Loaded by yota_src.rules once the user's code has imported scipy.integrate.
The solvers call the user's right-hand side natively, at steps they choose
from the data, so the unroller cannot record what it computes; an exact
gradient needs the adjoint equations integrated backwards with the
right-hand side's VJP, which yota-src does not generate. A differentiated
value reaching one is a NoDiffRuleError naming the alternative: the same
integration written as an explicit loop, which is differentiated step by step.
"""

import scipy.integrate

from yota_src.rules import refused

refused(
    scipy.integrate.odeint, scipy.integrate.solve_ivp,
    reason="the solver calls your right-hand side natively, at steps chosen from the data, "
           "so what it computes cannot be recorded, and yota-src does not generate the "
           "adjoint ODE a gradient through it needs. Write the integration as an explicit "
           "loop in your own code instead, e.g. fixed-step Runge-Kutta: `for i in "
           "range(steps): k1 = f(y, t); k2 = f(y + h / 2 * k1, t + h / 2); k3 = f(y + h / 2 "
           "* k2, t + h / 2); k4 = f(y + h * k3, t + h); y = y + h / 6 * (k1 + 2 * k2 + 2 * "
           "k3 + k4); t = t + h`, which is differentiated step by step",
)
