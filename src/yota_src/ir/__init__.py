"""The intermediate representation every stage hands the next: the Tape
(tape.py, its grammar at the top), the loop op (loops.py), what a trace is
specialised to (signature.py, specialisation.py), the blocks ops compute
under (contexts.py), and pictures of a tape (dot.py, display.py)."""

from yota_src.ir import dot, library_shapes  # noqa: F401 - (its rules join shapes.py's)
from yota_src.ir.tape import Tape

Tape.drawer = staticmethod(dot.to_dot)  # wired here: dot.py reads the tape's classes
