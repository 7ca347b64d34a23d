"""What the user sees: print, warnings and logging happen in the generated
code, in order, with live values, once per call (issue 7, class 10); text
made from traced values is a recorded value (class 3, strings)."""

import logging
import sys
import warnings

import numpy as np
import pytest

import yota_src as ys
from yota_src.errors import ControlFlowChanged, UnsupportedSyntaxError

LOG = logging.getLogger("yota_src.tests.side_effects")


def shows_values(x):
    y = np.sum(x ** 2)
    print("loss", y, f"first={x[0]:.2f}")
    z = y * 3.0
    print(f"{z!r}", "end", sep="|")
    return z


def shows_in_a_loop(x):
    total = 0.0
    for i in range(1, 4):
        total = total + x[i - 1] * i
        report(i, total)
    return total


def report(step, value):
    print(f"step {step}: {value:.3f}")


def shows_only_text(x):
    print("starting")
    return np.sum(np.sin(x))


@pytest.mark.parametrize("f", [shows_values, shows_in_a_loop, shows_only_text])
def test_every_call_prints_what_f_prints(f, capsys):
    for x in (np.array([1.0, 2.0, 3.0]), np.array([-0.5, 0.25, 4.0])):
        f(x)
        expected = capsys.readouterr().out
        value, _ = ys.grad(f, x)  # the first call prints once, like f; later ones too
        assert capsys.readouterr().out == expected
        assert value == pytest.approx(f(x))
        capsys.readouterr()


def test_generated_code_prints_and_tracing_does_not(capsys):
    x = np.array([1.0, 2.0, 3.0])
    gradient = ys.simplegrad(shows_values, x)
    ys.trace(shows_values, x)
    assert capsys.readouterr().out == ""
    assert 'print("loss", y, f"first={x[0]:.2f}")' in gradient.source
    gradient(x * 2)
    shows_values(x * 2)
    printed, expected = capsys.readouterr().out.split("loss")[1:]
    assert printed == expected


def writes_to_stderr(x):
    print("value", np.sum(x), file=sys.stderr)
    return np.sum(x * x)


def test_print_to_stderr_goes_to_stderr(capsys):
    ys.grad(writes_to_stderr, np.ones(2))
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", "value 2.0\n")


def warns_and_logs(x):
    y = np.sum(x * x)
    warnings.warn(f"large loss {y:.1f}", RuntimeWarning)  # noqa: B028
    logging.getLogger("yota_src.tests.side_effects").info("loss %.2f", y)
    LOG.warning("again %s", y > 1)
    return y


def test_warnings_and_logging_happen_at_every_call(caplog):
    caplog.set_level(logging.INFO, logger=LOG.name)
    for scale in (1.0, 2.0):
        with pytest.warns(RuntimeWarning, match=f"large loss {2 * scale ** 2:.1f}"):
            ys.grad(warns_and_logs, np.ones(2) * scale)
    messages = [record.getMessage() for record in caplog.records]
    assert messages == ["loss 2.00", "again True", "loss 8.00", "again True"]
    assert 'logging.getLogger("yota_src.tests.side_effects").warning(' in \
        ys.simplegrad(warns_and_logs, np.ones(2)).source


class Model:
    def __init__(self, w):
        self.w = w


def prints_an_object(model, x):
    print(model)
    return np.sum(model.w * x)


def prints_to_a_file(x, f):
    print(np.sum(x), file=f)
    return np.sum(x)


def test_output_generated_code_cannot_repeat_is_refused_at_the_line(tmp_path):
    refusal = r"test_side_effects.py:\d+: print\(\) of a Model"
    with pytest.raises(UnsupportedSyntaxError, match=refusal):
        ys.grad(prints_an_object, Model(np.ones(2)), np.ones(2))
    with (tmp_path / "log.txt").open("w") as f:
        with pytest.raises(UnsupportedSyntaxError, match="print\\(file=...\\) to a TextIOWrapper"):
            ys.grad(prints_to_a_file, np.ones(2), f)


def formats(x):
    y = np.sum(x)
    text = ("{:.1f}".format(y) + " | " + "%.2f" % y  # noqa: UP031, UP032 (what is tested)
            + " | " + str(x[0]) + " | " + format(y, ".0f"))
    return y * len(x), text


def test_text_from_traced_values_is_computed_at_every_call():
    def loss(x):
        y, text = formats(x)
        print(text)
        return y
    gradient = ys.simplegrad(loss, np.array([1.0, 2.0]))
    assert "Traced" not in gradient.source
    for x in (np.array([1.0, 2.0]), np.array([3.5, -1.25])):
        assert ys.grad(loss, x)[0] == pytest.approx(loss(x))


def decides_on_text(x):
    if f"{x[0]:.0f}" == "1":
        return np.sum(x * 2.0)
    return np.sum(x ** 3)


def decides_on_length(x):
    return np.sum(x) * len(str(np.round(x[0], 1)))


@pytest.mark.parametrize("f, other", [(decides_on_text, [3.0, 2.0]),
                                      (decides_on_length, [10.25, 2.0])])
def test_decisions_on_text_are_guarded(f, other):
    x, y = np.array([1.0, 2.0]), np.array(other)
    ys.check_grad(f, x)
    with pytest.raises(ControlFlowChanged):
        ys.grad(f, y)
    assert ys.grad(f, y, dynamic=True)[0] == pytest.approx(f(y))
    with pytest.raises(ControlFlowChanged):
        ys.simplegrad(f, x)(y)


@pytest.mark.parametrize("to_number", [float, complex], ids=["float", "complex"])
def test_a_number_read_back_from_text_is_refused(to_number):
    """No gradient passes through text; silently treating float(text) as a
    constant would give a wrong one."""
    def loss(x):
        label = f"{x[0]}"
        return np.sum(x) * to_number(label).real

    with pytest.raises(ys.errors.UnsupportedSyntaxError, match=r"\(\) of text made from"):
        ys.grad(loss, np.array([2.0, 3.0]))


def prints_then_branches(x):
    print("called with", x[0])
    if x[0] > 0:
        return np.sum(x)
    warnings.warn(f"negative: {x[0]}", stacklevel=1)
    return np.sum(x * 2.0)


def test_a_call_that_takes_another_branch_shows_its_output_once(capsys):
    x = np.array([1.0, 2.0])
    ys.grad(prints_then_branches, x, dynamic=True)
    capsys.readouterr()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ys.grad(prints_then_branches, -x, dynamic=True)
        ys.grad(prints_then_branches, x, dynamic=True)
    assert capsys.readouterr().out == "called with -1.0\ncalled with 1.0\n"
    assert [str(w.message) for w in caught] == ["negative: -1.0"]


def divides_under_raise(x):
    with np.errstate(divide="raise"):
        y = 1.0 / (x - 0.5)
    return np.sum(np.nan_to_num(y))


def logs_under_ignore(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        y = np.where(x > 0, np.log(np.abs(x) + (x == 0)), 0.0)
        with np.errstate(all="raise"):
            z = np.sqrt(x + 2.0)
    return np.sum(y) + np.sum(z)


def test_errstate_raise_is_kept_in_the_generated_code():
    ys.grad(divides_under_raise, np.array([1.0, 2.0]))
    with pytest.raises(FloatingPointError):
        divides_under_raise(np.array([0.5, 1.0]))
    with pytest.raises(FloatingPointError):
        ys.grad(divides_under_raise, np.array([0.5, 1.0]))
    assert 'with np.errstate(divide="raise"):' in ys.simplegrad(
        divides_under_raise, np.array([1.0, 2.0])).source


def test_errstate_blocks_nest_and_cover_the_gradients_of_what_they_compute():
    x = np.array([-1.0, 0.0, 2.0])
    df = ys.simplegrad(logs_under_ignore, x)
    assert 'with np.errstate(divide="ignore", invalid="ignore"):' in df.source
    assert 'with np.errstate(divide="raise", invalid="raise", over="raise", under="raise"):' \
        in df.source
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning escapes the blocks
        value, dx = df(x)
    assert value == logs_under_ignore(x)
    ys.check_grad(logs_under_ignore, np.array([-1.0, 0.5, 2.0]))


def test_changing_numpys_error_handling_for_the_process_is_refused():
    def f(x):
        np.seterr(divide="ignore")
        return np.sum(1.0 / x)

    with pytest.raises(ys.errors.UnsupportedSyntaxError, match="np.seterr"):
        ys.grad(f, np.array([1.0, 2.0]))


def logs_with_warnings_as_errors(x):
    with warnings.catch_warnings():
        total = np.sum(x)
        warnings.simplefilter("error", RuntimeWarning)
        y = np.log(x)
    return np.sum(y) + total


def test_warning_filters_set_in_the_function_are_kept():
    ys.grad(logs_with_warnings_as_errors, np.array([1.0, 2.0]))
    with pytest.raises(RuntimeWarning):
        logs_with_warnings_as_errors(np.array([0.0, 2.0]))
    with pytest.raises(RuntimeWarning):
        ys.grad(logs_with_warnings_as_errors, np.array([0.0, 2.0]))
    ys.check_grad(logs_with_warnings_as_errors, np.array([1.0, 2.0]))


def test_a_filter_outside_catch_warnings_is_refused():
    def f(x):
        warnings.simplefilter("ignore")
        return np.sum(x)

    with pytest.raises(ys.errors.UnsupportedSyntaxError, match="outside `with warnings"):
        ys.grad(f, np.ones(2))


def inverts_or_falls_back(a):
    try:
        inverse = np.linalg.inv(a)
    except np.linalg.LinAlgError:
        inverse = np.eye(2)
    return np.sum(inverse)


def divides_or_falls_back(x):
    try:
        with np.errstate(divide="raise"):
            ratio = 1.0 / x
    except (FloatingPointError, ZeroDivisionError):
        ratio = x
    return np.sum(ratio)


@pytest.mark.parametrize("f, traced_at, raises_at", [
    (inverts_or_falls_back, np.array([[2.0, 1.0], [1.0, 3.0]]), np.ones((2, 2))),
    (divides_or_falls_back, np.array([1.0, 2.0]), np.array([0.0, 2.0])),
], ids=["LinAlgError", "FloatingPointError"])
def test_data_on_which_a_try_body_raises_is_refused(f, traced_at, raises_at):
    assert ys.grad(f, traced_at)[0] == pytest.approx(f(traced_at))
    ys.check_grad(f, traced_at)
    with pytest.raises(ControlFlowChanged, match="on which the `try` at"):
        ys.grad(f, raises_at)
    assert "except (" in ys.simplegrad(f, traced_at).source


def prints_and_logs(x):
    print("epoch start")
    logging.getLogger("yota_src_test").warning("loss computed")
    return np.sum(x) if x[0] > 0 else np.sum(x * 2.0)


def test_output_keeps_its_order_when_it_cannot_all_be_held_back(capsys, caplog):
    x = np.array([1.0, 2.0])
    ys.grad(prints_and_logs, x, dynamic=True)
    capsys.readouterr()
    caplog.clear()
    ys.grad(prints_and_logs, x, dynamic=True)  # the same path: printed before logging
    assert capsys.readouterr().out == "epoch start\n"
    assert [r.getMessage() for r in caplog.records] == ["loss computed"]
