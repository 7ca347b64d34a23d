"""Loop provenance on the tape (iterations.py), and which iterations did the
same work (passes/roll.py's matching, which rolling loops back up stands on)."""

import numpy as np
from golden_programs import newton_sqrt, rnn
from helpers_loops import nested, rows_with_a_branch

import yota_src as ys
from yota_src.ir.iterations import iterations
from yota_src.passes.roll import matching_runs


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


def test_an_rnn_is_one_run_from_its_first_step():
    rng = np.random.default_rng(0)
    tape = tape_of(rnn, rng.normal(size=(4, 3)), rng.normal(size=(4, 4)), rng.normal(size=(6, 3)))
    # step 0 reads the zeros h starts from, the others the carried h: the same role
    assert [run[1:] for run in matching_runs(tape)] == [(0, 5)]


def test_a_while_loop_runs_while_its_test_holds():
    tape = tape_of(newton_sqrt, 2.0)
    (run,) = matching_runs(tape)
    assert run[1:] == (1, 3)  # iteration 0 tests nothing traced (err starts as 1.0)


def test_a_branch_splits_the_runs():
    X = np.array([[1.0, 0], [2, 0], [3, 0], [-1, 0], [-2, 0], [-3, 0], [4, 0]])
    runs = matching_runs(tape_of(rows_with_a_branch, X))
    assert [run[1:] for run in runs] == [(0, 2), (3, 5)]


def test_runs_shorter_than_asked_for_are_not_runs():
    X = np.array([[1.0, 0], [2, 0], [-1, 0], [-2, 0], [4, 0]])
    assert matching_runs(tape_of(rows_with_a_branch, X)) == []
    assert len(matching_runs(tape_of(rows_with_a_branch, X), shortest=2)) == 2


def test_nested_loops_compare_by_position_not_entry():
    runs = matching_runs(tape_of(nested, np.ones((4, 4))))
    lengths = sorted(last - first + 1 for _, first, last in runs)
    assert lengths.count(4) == 5  # the outer loop, and the columns of each row
