"""The reverse pass, Tape -> Tape: each op's adjoint template run backwards
by a template driver (sweep.py, propagate.py); higher-order ops register
their adjoints in a table this stage owns (higher_order.py, filled by
loop_adjoint.py); a pullback's cotangent seeds the sweep (cotangents.py)."""

from yota_src.differentiate import (
    branch_adjoint,  # noqa: F401 - registers the branch op's adjoint
    loop_adjoint,  # noqa: F401 - registers the loop op's adjoint
)
