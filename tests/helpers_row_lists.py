"""Functions of lists of arrays, for test_row_lists.py: each reads its list
as the primal would, in one of the ways the interpreter reads such a list
as the rows of one array (tracing/row_lists.py), or another."""

import numpy as np


def loop(W, xs, h):
    for x in xs:
        h = np.tanh(W @ h + x)
    return np.sum(h)


def indexed(W, xs, h):
    for t in range(len(xs)):
        h = np.tanh(W @ h + xs[t])
    return np.sum(h) / len(xs)


def enumerated(W, xs, h):
    total = 0.0
    for t, x in enumerate(xs):
        h = np.tanh(W @ h + x)
        total = total + np.sum(h * xs[t])
    return total


def zipped(W, xs, ys, h):
    loss = 0.0
    for x, y in zip(xs, ys):
        h = np.tanh(W @ h + x)
        loss = loss + np.sum((h - y) ** 2)
    return loss


def collected(W, xs, h):
    hs = []
    for x in xs:
        h = np.tanh(W @ h + x)
        hs.append(h)
    return np.sum(np.stack(hs) ** 2)


def stacked(xs, w):
    a = np.stack(xs)
    b = np.stack(xs, axis=1)
    c = np.array(xs)
    return np.sum(a @ w) + np.sum(b.T * c) + np.sum(np.asarray(xs) ** 3)


def reduced(xs, w):
    return np.sum(np.mean(xs, axis=0) * w) + np.sum(np.dot(xs, w) ** 2) + np.max(xs)


def ends(xs, w):
    return np.sum(xs[-1] * w) + np.sum(xs[0] ** 2) + np.sum(xs[1] * xs[-2])


def sliced(W, xs, h):
    for x in xs[1:]:
        h = np.tanh(W @ h + x)
    for x in xs[::-1]:
        h = np.tanh(W @ h - x)
    return np.sum(h)


def builtin_sum(xs, w):
    return np.sum(sum(xs) * w)


def comprehension(xs, w):
    return np.sum(np.stack([np.tanh(x * w) for x in xs]))


def joined(xs, ys, w):
    total = 0.0
    for z in xs + ys:
        total = total + np.sum(z * w)
    return total + len(xs + ys)


def unpacked(xs, w):
    first, *rest = xs
    return np.sum(first * w) + sum(np.sum(r ** 2) for r in rest)


def listed(xs, w):
    copy = list(xs)
    return np.sum(copy[-1] * w) + np.sum(copy[0])


def appended(xs, w):
    xs.append(w)
    return np.sum(np.stack(xs) ** 2)


def item_written(xs, w):
    xs[0] = w * 2.0
    return np.sum(xs[1] * w)


def in_a_dict(params, h):
    for W, b in zip(params["Ws"], params["bs"]):
        h = np.tanh(W @ h + b)
    return np.sum(h ** 2)


def layers(Ws, bs, h):
    for W, b in zip(Ws, bs):
        h = np.tanh(W @ h + b)
    return np.sum(h ** 2)


def typed(xs, w):
    if type(xs) is list and isinstance(xs, list):
        return np.sum(xs[0] * w)
    return np.sum(w)


def times_array(xs, w, W):
    return np.sum((W @ np.stack(xs).T) ** 2) + np.sum(xs * w) + np.sum(w + xs)


def labels(xs, ys, W):
    loss = 0.0
    for x, y in zip(xs, ys):
        scores = W @ x
        loss = loss + np.sum(scores[y])
    return loss


def aux(xs, w):
    return np.sum(np.stack(xs) @ w), xs


def item_changed(xs, w):
    first = list(xs)[0]
    first += w
    part = list(xs)[1][1:]
    part *= 2.0
    return np.sum(xs[0] * xs[1])


# --- the length read in other ways: each pins it (a decision on it holds) ---


def length_by_shape(W, xs):
    out = np.sum(np.tanh(np.stack(xs) @ W) ** 2)
    if np.shape(xs)[0] > 3:
        out = out / 2
    return out


def length_of_copy(W, xs):
    out = np.sum(np.tanh(np.stack(xs) @ W) ** 2)
    if len(list(xs)) > 3:
        out = out / 2
    return out


def length_of_joined(W, xs):
    out = np.sum(np.tanh(np.stack(xs) @ W) ** 2)
    if len(xs + []) > 3 or len(xs * 1) > 100:
        out = out / 2
    return out


def length_by_counting(W, xs):
    out = np.sum(np.tanh(np.stack(xs) @ W) ** 2)
    if max(i for i, _ in enumerate(xs)) > 2:
        out = out / 2
    return out


def length_of_vstack(W, xs):
    out = np.sum(np.tanh(np.stack(xs) @ W) ** 2)
    if len(np.vstack(xs)) > 3:
        out = out / 2
    return out


def length_through_map(W, xs):
    out = np.sum(np.tanh(np.stack(xs) @ W) ** 2)
    if sum(map(lambda _: 1, xs)) > 3:
        out = out / 2
    return out


# --- identity and what the list is ---


def last_by_identity(W, xs):
    h = np.zeros(W.shape[0])
    for x in xs:
        h = np.tanh(W @ h + x)
        if x is xs[-1]:
            return np.sum(h ** 2)
    return 0.0


def class_of(W, xs):
    scale = 1.0 if xs.__class__ is list and not hasattr(xs, "rows") else 3.0
    return scale * np.sum(np.stack(xs) @ W)


def only_lists(xs):
    return np.sum(np.stack(xs) ** 2)


def stack_of_a_slice(W, xs):
    return np.sum(np.stack(xs[4:]) @ W)


def masks(x, ms):
    s = 0.0
    for m in ms:
        s = s + np.sum(x[m] ** 2)
    return s


def stores_an_item(d, w):
    d["last"] = d["Ws"][-1]
    return np.sum(d["Ws"][0] @ w)


def written_through_one_read_through_other(xs, zs):
    xs[0] = xs[0] * 2
    return np.sum(zs[0] ** 2)


def ids_compared(x, y):
    return np.sum(x) * (2.0 if id(x) == id(y) else 1.0)
