"""Loop provenance on the tape, and which iterations did the same work
(iterations.py, the analysis that rolling loops back up stands on)."""

import numpy as np
from golden_programs import newton_sqrt, rnn
from helpers_loops import nested, rows_with_a_branch

import yota_src as ys
from yota_src.iterations import Run, identical_runs, iterations


def tape_of(f, *args):
    return ys.trace(f, *args)[1]


def test_each_op_knows_its_loop_and_iteration():
    rng = np.random.default_rng(0)
    tape = tape_of(rnn, rng.normal(size=(4, 3)), rng.normal(size=(4, 4)), rng.normal(size=(6, 3)))
    (entry, by_iteration), = iterations(tape).items()
    assert sorted(by_iteration) == list(range(6))
    assert all(op.loc.loops == ((entry, i),) for i, ops in by_iteration.items() for op in ops)
    assert not any(op.loc.loops for op in tape.ops if op not in
                   {o for ops in by_iteration.values() for o in ops} and op.loc is not None)


def test_an_rnn_is_one_run_after_its_first_step():
    rng = np.random.default_rng(0)
    tape = tape_of(rnn, rng.normal(size=(4, 3)), rng.normal(size=(4, 4)), rng.normal(size=(6, 3)))
    (run,) = identical_runs(tape)
    assert (run.first, run.last) == (1, 5)  # step 0 reads the zeros, the others the carried h


def test_a_while_loop_runs_while_its_test_holds():
    tape = tape_of(newton_sqrt, 2.0)
    (run,) = identical_runs(tape)
    assert (run.first, run.last) == (1, 3)  # iteration 0 tests nothing traced (err = 1.0)


def test_a_branch_splits_the_runs():
    X = np.array([[1.0, 0], [2, 0], [3, 0], [-1, 0], [-2, 0], [4, 0]])
    runs = identical_runs(tape_of(rows_with_a_branch, X))
    assert [(r.first, r.last) for r in runs] == [(1, 2), (3, 4)]


def test_nested_loops_compare_by_position_not_entry():
    runs = identical_runs(tape_of(nested, np.ones((3, 4))))
    outer = [run for run in runs if run.length == 2]  # outer iterations 1-2 match each other
    inner = [run for run in runs if run.length == 3]  # in each row, columns 1-3 match
    assert len(outer) == 1 and len(inner) == 3
    assert isinstance(outer[0], Run)
