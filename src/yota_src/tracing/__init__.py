"""The first stage: a function and example arguments -> the primal Tape.

A staged interpreter runs the function's gast tree on the arguments: static
values are folded, traced values recorded as ops; loops run (and roll while
traced), branches are decided and guarded, helpers inlined, and every read
from outside the arguments kept as part of the specialisation. Other stages
reach the interpreter through the names below, and what it hands them
through the modules that define it: traced values (traced.py), sources
(source.py), the array library (array_library.py), trip counts (counts.py).
"""

from yota_src.tracing.calls import UserFunction, signature_of
from yota_src.tracing.frames import Frame
from yota_src.tracing.interpreter import Unroller
from yota_src.tracing.ownership import inlinable
from yota_src.tracing.random_draws import random_states, rewind

__all__ = ["Frame", "Unroller", "UserFunction", "inlinable", "random_states", "rewind",
           "signature_of"]
