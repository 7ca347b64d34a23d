"""A loop whose trip count is an argument: the gradient is never stale.

`double(x, n)` doubles x n times, so its derivative is 2**n. `grad` caches
per static argument value, so n = 1, 2, 3 give 2, 4, 8. Since `n` is only a
trip count, `ys.simplegrad(double, 1.5, 3)` writes `for _ in range(n):`
loops that read `n` at run time: that one module serves every n.

    python examples/iterative.py
"""


def double(x, n):
    for _ in range(n):
        x = x * 2.0
    return x


def example():
    return 1.5, 3


def main():
    import yota_src as ys

    for n in (1, 2, 3):
        _, g = ys.grad(double, 1.5, n)
        print(f"n = {n}: d/dx = {g[0]}")
        assert g[0] == 2.0 ** n and g[1] is None


if __name__ == "__main__":
    main()
