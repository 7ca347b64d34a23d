"""Functions that change arrays in place, for test_mutation.py."""

import numpy as np


def fill_local(x):
    out = np.zeros((3, 2))
    out[0] = x[0] * 2.0
    out[1:] = np.tanh(x[1:])
    out[2, 1] += x[0, 0] ** 2
    return np.sum(out ** 2)


def local_augmented(x):
    y = x * 1.0
    alias = y
    items = [y]
    y += np.sin(x)
    y *= 2.0
    return np.sum(alias * items[0]) + np.sum(y)


def scalar_accumulate(x):
    total = 0.0
    for value in x:
        total += value * value
    return total


def augment_argument(x):
    x += 1.0
    return np.sum(x)


def augment_argument_alias(x):
    y = x
    y *= 2.0
    return np.sum(y)


def store_into_view(x):
    y = x * 1.0
    row = y[0]
    row[0] = 5.0
    return np.sum(y)


def store_into_viewed(x):
    y = x * 1.0
    view = y.T
    y[0, 0] = 5.0
    return np.sum(view)


def out_argument(x, z):
    y = x * 1.0
    np.add(y, z, out=y)
    np.tanh(y, out=y)
    return np.sum(y * x)


def out_into_argument(x, z):
    np.add(x, z, out=x)
    return np.sum(x)


def sort_in_place(x):
    y = x * 1.0
    y.sort()
    return np.sum(y)


def store_with_data_indices(x, z):
    y = x * 1.0
    y[np.argmax(x)] = 0.0  # one value: which index the data picks decides no ambiguity
    return np.sum(y * z)


def store_values_with_data_indices(x):
    y = x * 1.0
    y[np.argsort(x[:, 0])] = x * 2.0  # distinct rows at the example: guarded so
    return np.sum(y * np.arange(3)[:, None])


def store_values_with_repeating_data_indices(x):
    y = x * 1.0
    y[np.argmax(x, axis=1) * 0] = x[:, 0]  # every value into row 0: which one is last?
    return np.sum(y)


def scatter_rows(x, rows):
    out = np.zeros((4, 2))
    out[rows] = x * x
    return np.sum(out * np.arange(8.0).reshape(4, 2))


def one_hot_in_a_loop(x, z):
    labels = np.argmax(z, axis=1)
    onehot = np.zeros_like(x)
    for i in range(x.shape[0]):
        onehot[i, labels[i]] = 1.0
    return np.sum((x - onehot) ** 2)


def masked_in_place(x, z):
    h = x * z
    h[h < 0.2] *= 0.1  # a mask selects each element once
    return np.sum(h ** 2)


def rows_and_data_columns(x, z):
    margins = x + z
    margins[np.arange(x.shape[0]), np.argmax(z, axis=1)] = x[:, 0] * 3.0  # one per row
    return np.sum(margins ** 2)


def store_with_repeated_indices(x):
    y = x * 1.0
    y[np.array([0, 0])] = np.array([1.0, 2.0])
    return np.sum(y)


def store_with_static_indices(x):
    y = np.zeros(4)
    y[np.array([3, 0])] = x[:2] * 3.0
    return np.sum(y * np.arange(4.0))


def attribute_of_argument(model, x):
    model.W += x
    return np.sum(model.W)


def store_mixed_index(x):
    y = x * 1.0
    y[:, [2, 0]] = x[:, :2] * 3.0
    return np.sum(y ** 2)


def store_mixed_repeated(x):
    y = x * 1.0
    y[:, [0, 0]] = 5.0
    return np.sum(y)


def store_through_mask(x):
    y = x * 1.0
    y[np.array([True, False, True])] = 0.5
    return np.sum(y ** 2)


# --- arrays reached through containers and attributes, changed in place ----------

def augment_list_item(x):
    a = x * 1.0
    items = [a]
    items[0] += x  # the array itself changes: `a` sees it
    return np.sum(a * a)


def augment_dict_item(x):
    a = x * 1.0
    named = {"a": a}
    named["a"] *= 3.0
    return np.sum(a)


class Holder:
    def __init__(self, h):
        self.h = h


def augment_attribute_of_local_object(x):
    a = x * 1.0
    holder = Holder(a)
    holder.h -= 2.0 * x
    return np.sum(a ** 2)


def augment_indexed_once(x):
    count = [0]
    buf = [x * 1.0]

    def index():
        count[0] += 1
        return 0

    buf[index()] += x
    return np.sum(buf[0]) * count[0]


# --- writes to objects that arguments hold -------------------------------------

class Model:
    def __init__(self, W):
        self.W = W
        self.calls = 0

    def loss(self, x):
        self.calls = self.calls + 1
        return np.sum(self.W * x)


def record_history(state, x):
    state["history"].append(np.sum(x))
    return np.sum(x ** 2)


def store_in_argument_dict(state, x):
    state["last"] = np.sum(x)
    return np.sum(x ** 2)


def count_in_argument_list(counts, x):
    counts[0] += 1
    return np.sum(x ** 2)


# --- views written, and arrays written under their views -------------------------

def rnn_state_buffer(W, U, xs):
    h = np.zeros((xs.shape[0] + 1, U.shape[0]))
    for t in range(xs.shape[0]):
        h[t + 1] = np.tanh(W @ xs[t] + U @ h[t])
    return np.sum(h[-1] ** 2) + np.sum(h)


def slice_accumulated(x, w):
    out = np.zeros(x.shape[0] + w.shape[0] - 1)
    for i in range(x.shape[0]):
        out[i:i + w.shape[0]] += x[i] * w
    return np.sum(out ** 2)


def reshaped_then_written(x, w):
    grid = x * 1.0
    flat = grid.reshape(-1)
    flat -= w[0]
    flat[1] = w[1] * 3.0
    return np.sum(grid * grid)


def transposed_then_written(x, w):
    grid = x * 2.0
    columns = grid.T
    columns[0] += w[0]
    return np.sum(grid ** 3)


def views_held_across_writes(x, w):
    a = x * 1.0
    rows = [a[0], a[1]]
    a[0, 0] = w[0]
    a += w[1]
    return np.sum(rows[0] * rows[1]) + np.sum(a)


def view_of_a_view_written(x, w):
    a = x * 1.0
    corner = a[:2][:, :1]
    corner *= w[0]
    return np.sum(a ** 2)


def written_through_a_view_of_an_argument(x, w):
    row = x[0]
    row[0] = w[0]
    return np.sum(x)
