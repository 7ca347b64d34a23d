"""A branch on the data: the generated gradient guards the way it went.

    python examples/branch.py
"""

import numpy as np


def energy(x):
    if np.sum(x) > 0:
        return np.sum(x ** 2)
    return -np.sum(x)


def example():
    return (np.array([1.0, 2.0, 3.0]),)


def main():
    import yota_src as ys

    (x,) = example()
    df = ys.simplegrad(energy, x)
    print(df)
    print("positive sum:", df(x))
    try:
        df(-x)
    except ValueError as error:
        print("negative sum:", error)
    else:
        raise AssertionError("the guard did not fire")


if __name__ == "__main__":
    main()
