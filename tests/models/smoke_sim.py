"""Stam-style smoke on a periodic grid: semi-Lagrangian advection with
bilinear interpolation (indices from np.floor), a Gauss-Seidel pressure
projection written with np.roll, and in-place velocity corrections. The
initial velocity field, a flat vector, is fitted so the smoke reaches a
target image."""

import numpy as np

NUM_STEPS, PROJECT_ITERS = 2, 4


def project(vx, vy):
    p = np.zeros(vx.shape)
    h = 1.0 / vx.shape[0]
    div = -0.5 * h * (np.roll(vx, -1, axis=0) - np.roll(vx, 1, axis=0)
                      + np.roll(vy, -1, axis=1) - np.roll(vy, 1, axis=1))
    for _ in range(PROJECT_ITERS):
        p = (div + np.roll(p, 1, axis=0) + np.roll(p, -1, axis=0)
             + np.roll(p, 1, axis=1) + np.roll(p, -1, axis=1)) / 4.0
    vx -= 0.5 * (np.roll(p, -1, axis=0) - np.roll(p, 1, axis=0)) / h
    vy -= 0.5 * (np.roll(p, -1, axis=1) - np.roll(p, 1, axis=1)) / h
    return vx, vy


def advect(f, vx, vy):
    rows, cols = f.shape
    cell_ys, cell_xs = np.meshgrid(np.arange(rows), np.arange(cols))
    center_xs = (cell_xs - vx).ravel()
    center_ys = (cell_ys - vy).ravel()
    left_ix = np.floor(center_xs).astype(int)
    top_ix = np.floor(center_ys).astype(int)
    rw = center_xs - left_ix
    bw = center_ys - top_ix
    left_ix = np.mod(left_ix, rows)
    right_ix = np.mod(left_ix + 1, rows)
    top_ix = np.mod(top_ix, cols)
    bot_ix = np.mod(top_ix + 1, cols)
    flat_f = (1 - rw) * ((1 - bw) * f[left_ix, top_ix] + bw * f[left_ix, bot_ix]) \
        + rw * ((1 - bw) * f[right_ix, top_ix] + bw * f[right_ix, bot_ix])
    return np.reshape(flat_f, (rows, cols))


def simulate(vx, vy, smoke):
    for _ in range(NUM_STEPS):
        vx_updated = advect(vx, vx, vy)
        vy_updated = advect(vy, vx, vy)
        vx, vy = project(vx_updated, vy_updated)
        smoke = advect(smoke, vx, vy)
    return smoke


def loss(params, init_smoke, target):
    rows, cols = target.shape
    init_vx = np.reshape(params[:rows * cols], (rows, cols))
    init_vy = np.reshape(params[rows * cols:], (rows, cols))
    final_smoke = simulate(init_vx, init_vy, init_smoke)
    return np.mean((target - final_smoke) ** 2)


def example(seed):
    rs = np.random.RandomState(seed)
    n = 5
    yy, xx = np.mgrid[0:n, 0:n]
    init_smoke = np.exp(-((xx - 2.0) ** 2 + (yy - 2.0) ** 2) / 2.0)
    target = np.roll(init_smoke, 1, axis=0)
    params = 0.3 * rs.randn(2 * n * n)
    return params, init_smoke, target
