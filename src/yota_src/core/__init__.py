"""Underneath every stage: the one walk over nested values (nested.py),
Python's operators once (operators.py), arguments as leaves with paths
(values.py), what a primitive is and how it is named (primitives.py, with
SciPy's distributions in distributions.py), the table of rules the tracer
and the reverse sweep read (registry.py), and text run under a name
linecache knows (compiled_text.py). Nothing here imports a stage."""
