"""A corpus of small, complete objective functions written the way research
code for NumPy autograd libraries is written (issue 8, "How to check
yourself").

Each model is a module of its own that exposes

    loss(*args)      the objective, a scalar
    example(seed)    the arguments at one point (float64, small sizes)

and optionally

    DYNAMIC = True   control flow depends on the data: the second point is
                     differentiated with ys.grad(..., dynamic=True)
    RTOL, ATOL       tolerances for the finite-difference check

`_harness.py` checks a model; tests/programs/test_models.py and tools/run_models.py
run the corpus.
"""
