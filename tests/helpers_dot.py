"""A DOT document as `Tape.to_dot` writes it, parsed back: shared by the
tests of the drawing (ir/test_dot.py) and of `yota-src trace --dot`."""

import re

TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|->|[{}\[\];=,]|[A-Za-z_][A-Za-z0-9_.]*|\S')


def parse_dot(text: str) -> dict:
    """The structure of a DOT document as `to_dot` writes it: its node ids
    with their attributes, its edges, and its subgraphs; AssertionError
    where it is not well formed (unbalanced braces or brackets, an
    unterminated string, an edge to an undeclared node)."""
    tokens = TOKEN.findall(text)
    assert tokens[:1] == ["digraph"] and tokens[2] == "{", tokens[:3]
    depth, nodes, edges, subgraphs = 0, {}, [], []
    statement: list[str] = []
    for token in tokens[2:]:
        if token == "{":
            depth += 1
            if statement[:1] == ["subgraph"]:
                subgraphs.append(statement[1])
            statement = []
        elif token == "}":
            depth -= 1
            assert depth >= 0, "a } closes nothing"
            statement = []
        elif token == ";":
            _statement(statement, nodes, edges)
            statement = []
        else:
            statement.append(token)
    assert depth == 0, "unbalanced braces"
    for source, target in edges:
        assert source in nodes and target in nodes, f"edge {source} -> {target}: undeclared"
    return {"nodes": nodes, "edges": edges, "subgraphs": subgraphs}


def _statement(tokens: list, nodes: dict, edges: list) -> None:
    if "->" in tokens:
        arrow = tokens.index("->")
        edges.append((tokens[arrow - 1], tokens[arrow + 1]))
    elif len(tokens) > 1 and tokens[1] == "[" and tokens[0] not in ("node", "edge", "graph"):
        assert tokens[-1] == "]", tokens
        body = tokens[2:-1]
        attributes = {}
        for i in range(0, len(body), 4):  # key = value ,
            key, equals, value = body[i:i + 3]
            assert equals == "="
            attributes[key] = unquote(value)
        nodes[tokens[0]] = attributes


def unquote(value: str) -> str:
    if not value.startswith('"'):
        return value
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), value[1:-1])
