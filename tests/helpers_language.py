"""Functions exercised by test_language.py, defined at module level (with source)."""

import functools

import numpy as np

SCALE = 3.0


def layer(W, x):
    return np.tanh(W @ x)


def two_layers(W1, W2, x):
    return np.sum(layer(W2, layer(W1, x)))


def tuple_unpacking(x):
    a, b = x[0], x[1]
    (c, d), e = (a * b, a + b), np.sin(a)
    first, *rest = [c, d, e]
    return np.sum(first * rest[0] + rest[1])


def augmented(x):
    y = x * 1.0  # a fresh array: `y += ...` on an alias of x would mutate the argument
    y += 1.0
    y *= x
    y -= 0.5
    y /= 2.0
    y **= 2
    return np.sum(y)


def operators(a, b):
    return np.sum(-a + (+b) - a * b / (1.0 + b ** 2)) + np.sum(a @ b.T)


def methods_and_properties(x):
    n = x.shape[0]
    return x.sum() + x.T.sum(axis=0).mean() + x.reshape(-1, n).max() + x.ndim * x.size


def recursive_power(x, n):
    if n == 0:
        return 1.0
    return x * recursive_power(x, n - 1)


def recursion(x):
    return np.sum(recursive_power(x, 4))


def loops(x, n):
    total = 0.0
    for i in range(n):
        total = total + x[i] * i
    for a, b in zip([x[0], x[1]], (x[2], x[3])):
        total = total + a * b
    for i, row in enumerate(x[:2]):
        total = total + row * (i + 1)
    for value in x:
        total = total + value ** 2
    return np.sum(total)


def while_loop(x):
    i = 0
    y = x * 1.0  # a fresh array: `y += ...` on an alias of x would mutate the argument
    while i < 3:
        y = np.sin(y)
        i += 1
    return np.sum(y)


def branches(x, mode):
    if mode == "square":
        y = x ** 2
    elif mode == "cube":
        y = x ** 3
    else:
        y = x
    if np.sum(x) > 0:
        y = y * 2.0
    else:
        y = -y
    return np.sum(y)


def control(x):
    total = 0.0
    for i in range(10):
        if i == 1:
            continue
        if i == 4:
            break
        total = total + x[i] ** 2
    for j in range(3):
        if j == 2:
            return total * x[j]
    return total


def containers(x):
    items = [x[0], x[1]]
    pair = (x[2], x[3])
    table = {"a": x[0] * 2.0, "b": pair[1]}
    squares = [v ** 2 for v in items if v is not None]
    named = {k: v * 3.0 for k, v in table.items()}
    return sum(squares) + named["a"] + named["b"] + pair[0]


def conditional_expression(x, flag):
    y = x * 2.0 if flag else x * 3.0
    z = np.exp(x) if np.sum(x) > 0 else np.cos(x)
    return np.sum(y + z)


def closure(x):
    w = x * 2.0

    def inner(v):
        return v * w

    scale = lambda v: v * SCALE  # noqa: E731
    return np.sum(inner(x) + scale(x))


def defaults_and_keywords(x, power=2, *, offset=0.5):
    return np.sum((x + offset) ** power)


def call_with_keywords(x):
    return defaults_and_keywords(x, offset=1.5) + defaults_and_keywords(x, 3)


def variadic(*values, **weights):
    return sum(v * weights.get(f"w{i}", 1.0) for i, v in enumerate(values))


def call_variadic(x):
    return np.sum(variadic(x, x ** 2, w1=3.0))


def trace_decorator(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper


@trace_decorator
def decorated(x):
    return np.sum(np.exp(x))


def partial_call(x):
    scaled = functools.partial(defaults_and_keywords, power=3)
    return scaled(x)


def nondifferentiable_parts(x):
    k = np.argmax(x)
    s = np.sign(x)
    f = np.floor(x * 3.0)
    i = x.astype(int)
    return np.sum(x * s) + x[k] ** 2 + np.sum(f * x) + np.sum(i * x)


def integer_static(x, n):
    return np.sum(x[:n] ** 2) * n


class Model:
    def __init__(self, W, b):
        self.W = W
        self.b = b

    def forward(self, x):
        return self.activation(self.W @ x + self.b)

    def activation(self, z):
        return np.tanh(z)

    def loss(self, x):
        return np.sum(self.forward(x) ** 2)

    @property
    def scaled_W(self):
        return self.W * 2.0


def model_loss(model, x):
    return model.loss(x) + np.sum(model.scaled_W)


def builds_model(W, b, x):
    return Model(W, b).loss(x)


def local_mutation(x):
    outs = []
    for i in range(3):
        outs.append(x * i)
    d = {}
    d["k"] = outs[2]
    return np.sum(outs[1] ** 2 + outs[2]) + np.sum(d["k"])


def data_while(x):
    y = x
    steps = 0
    while np.max(np.abs(y)) > 0.1:
        y = y * 0.5
        steps += 1
    return np.sum(y) * steps


def asserts(x):
    assert x.ndim == 2, "x must be a matrix"
    assert np.all(x > 0), "x must be positive"
    return np.sum(np.log(x))


def math_on_floats(a, b):
    import math

    return math.exp(a) * math.sin(b) + math.sqrt(a * a + 1.0) + math.log(b) + math.pow(a, 2.0) \
        + math.tanh(a) * math.cos(b) + math.fabs(a - b)


def python_extremes(x):
    values = [x[0], x[1] * 2.0, x[2] - 1.0]
    return max(values) + min(x[0], x[1]) * 3.0 + max(x[0] * 0.5, 0.25)


def layers_loss(layers, x):
    for W in layers:
        x = np.tanh(W @ x)
    return np.sum(x)


def reversed_and_isinstance(x, items):
    total = 0.0
    for i, value in enumerate(reversed(items)):
        if isinstance(value, float):
            total = total + value * x[i]
        else:
            total = total + np.sum(value * x[i])
    return total + len(items)


def make_with_activation(activation):
    def loss(x):
        return np.sum(activation(x) ** 2)

    return loss


def apply_twice(fn, x):
    return fn(fn(x))


def lambda_to_helper(x):
    return np.sum(apply_twice(lambda v: np.sin(v) * 2.0, x))


async def asynchronous(x):
    return x
