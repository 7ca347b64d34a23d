"""The layout's promise: a generated statement longer than the line limit is
broken inside brackets until every line fits, and means what it meant."""

import ast
import textwrap

from hypothesis import given
from hypothesis import strategies as st

from yota_src.codegen.layout import LINE_LIMIT, condition_lines, definition, fitted

NAMES = st.sampled_from(["x", "dW1", "t12", "params.W1", "h_3", "np.pi"])
NUMBERS = st.sampled_from(["1.5028301886792453", "0.5", "3", "-2.0", "1e-08", '"W1"',
                           '"of type dict with the keys [\'input_weights\', \'recurrent_weights\', '
                           '\'hidden_bias\', \'output_weights\'] in this order"'])
ATOMS = NAMES | NUMBERS


def _expressions():
    def grow(inner):
        return (
            st.tuples(inner, st.sampled_from(["+", "-", "*", "/", "@", "**", "//", "%", "<", "=="]),
                      inner).map(lambda t: f"({t[0]} {t[1]} {t[2]})")
            | st.tuples(st.sampled_from(["np.square", "np.log", "np.maximum", "np.where"]),
                        st.lists(inner, min_size=1, max_size=3)).map(
                lambda t: f"{t[0]}({', '.join(t[1])})")
            | st.tuples(inner, st.lists(inner, min_size=1, max_size=2)).map(
                lambda t: f"({t[0]})[{', '.join(t[1])}]")
            | inner.map(lambda e: f"-({e})")
            | inner.map(lambda e: f"({e}).sum(axis=0)")
            | inner.map(lambda e: f"({e}).T")
            | st.tuples(inner, inner, inner).map(lambda t: f"({t[0]} if {t[1]} else {t[2]})")
            | st.lists(inner, min_size=1, max_size=3).map(lambda es: f"[{', '.join(es)}]")
            | st.tuples(inner, inner).map(lambda t: f"({t[0]} and not {t[1]})"))
    return st.recursive(ATOMS, grow, max_leaves=40)


STATEMENTS = st.tuples(
    st.sampled_from(["t1 = ", "dx_3 += ", "return ", "", "out[:, t] = ", "a, b = "]),
    _expressions())


@given(STATEMENTS, st.integers(0, 3))
def test_every_statement_fits_and_keeps_its_meaning(statement, depth):
    head, expression = statement
    source = head + ast.unparse(ast.parse(expression, mode="eval"))
    indent = "    " * depth
    lines = fitted(indent + source)
    assert all(len(line) <= LINE_LIMIT for line in lines), "\n".join(lines)
    broken = textwrap.dedent("\n".join(lines))
    assert ast.dump(ast.parse(broken)) == ast.dump(ast.parse(source))


def test_a_quotient_is_broken_inside_its_last_parentheses_as_formatters_break_it():
    line = ("        t1 = (x0 + 1.5028301886792453) / "
            "(1.5 + np.square(np.log(1.5 + np.square(1.5028301886792453))))")
    assert fitted(line) == [
        "        t1 = (x0 + 1.5028301886792453) / (",
        "            1.5 + np.square(np.log(1.5 + np.square(1.5028301886792453)))",
        "        )"]


def test_strings_and_numbers_keep_their_spelling():
    line = 'y = np.maximum(params["W1"], 1.5028301886792453) * ' + " * ".join(["x"] * 40)
    assert '"W1"' in "\n".join(fitted(line))
    assert "1.5028301886792453" in "\n".join(fitted(line))


@given(_expressions(), st.integers(0, 3))
def test_every_condition_fits_and_keeps_its_meaning(expression, depth):
    """A guard's test at the top of the body (condition_lines) and a data
    guard's in a loop body at any depth (fitted)."""
    condition = ast.unparse(ast.parse(expression, mode="eval"))
    for lines in (["    " + line for line in condition_lines(condition)],
                  fitted("    " * depth + f"if {condition}:")):
        assert all(len(line) <= LINE_LIMIT for line in lines), "\n".join(lines)
        broken = textwrap.dedent("\n".join(lines)) + "\n    pass"
        assert ast.dump(ast.parse(broken).body[0].test) == ast.dump(
            ast.parse(condition).body[0].value)


def test_a_long_signature_takes_a_line_per_parameter():
    params = ["input_weights", "recurrent_weights", "hidden_bias", "output_weights",
              "output_bias", "sequence_of_inputs"]
    lines = definition("grad_many_args", params)
    assert all(len(line) <= LINE_LIMIT for line in lines)
    tree = ast.parse("\n".join(lines) + "\n    pass")
    assert [a.arg for a in tree.body[0].args.args] == params
