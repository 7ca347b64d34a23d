"""An affine layer summed: the 128x784 example of the README.

    python examples/affine.py
    yota-src gen examples/affine.py:loss --args examples/affine.py:example -o grad_loss.py
"""

import numpy as np


def loss(W, b, x):
    return np.sum(W @ x + b[:, None])


def example():
    rng = np.random.default_rng(0)
    return (rng.standard_normal((128, 784)), rng.standard_normal(128),
            rng.standard_normal((784, 100)))


def main():
    import yota_src as ys

    W, b, x = example()
    df = ys.simplegrad(loss, W, b, x)
    print(df)
    value, dW, db, dx = df(W, b, x)
    print(f"loss {value:.4f}; dW {dW.shape}, db {db.shape}, dx {dx.shape}")
    assert np.allclose(dW, np.ones((128, 100)) @ x.T)
    assert np.allclose(db, np.full(128, 100.0))


if __name__ == "__main__":
    main()
