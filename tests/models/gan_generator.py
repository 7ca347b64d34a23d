"""GAN, generator side: noise from a RandomState passed in, pushed through
the generator MLP, scored by the discriminator; the non-saturating loss
-mean(log D(G(z)))."""

import numpy as np

LATENT_DIM, DATA_DIM, BATCH = 2, 2, 6


def init_random_params(scale, layer_sizes, rs):
    return [(scale * rs.randn(m, n), scale * rs.randn(n))
            for m, n in zip(layer_sizes[:-1], layer_sizes[1:])]


def leaky_relu(x):
    return np.where(x > 0, x, 0.2 * x)


def neural_net_predict(params, inputs):
    inpts = inputs
    for W, b in params:
        outputs = np.dot(inpts, W) + b
        inpts = leaky_relu(outputs)
    return outputs


def log_sigmoid(x):
    return -np.logaddexp(0.0, -x)


def generate(gen_params, rs, num_samples=BATCH):
    noise = rs.randn(num_samples, LATENT_DIM)
    return neural_net_predict(gen_params, noise)


def loss(gen_params, dsc_params, rs):
    fake_data = generate(gen_params, rs)
    return -np.mean(log_sigmoid(neural_net_predict(dsc_params, fake_data)))


def init_pair(rs):
    gen_params = init_random_params(0.5, [LATENT_DIM, 5, DATA_DIM], rs)
    dsc_params = init_random_params(0.5, [DATA_DIM, 5, 1], rs)
    return gen_params, dsc_params


def example(seed):
    rs = np.random.RandomState(seed)
    gen_params, dsc_params = init_pair(rs)
    return gen_params, dsc_params, np.random.RandomState(50 + seed)
