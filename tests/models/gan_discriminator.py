"""GAN, discriminator side: the networks and the noise come from the
generator's module; real samples are scored against generated ones."""

import numpy as np

from .gan_generator import BATCH, DATA_DIM, generate, init_pair, log_sigmoid, neural_net_predict


def loss(dsc_params, gen_params, real_data, rs):
    fake_data = generate(gen_params, rs, num_samples=BATCH)
    logprobs_real = log_sigmoid(neural_net_predict(dsc_params, real_data))
    logprobs_fake = log_sigmoid(-neural_net_predict(dsc_params, fake_data))
    return -(np.mean(logprobs_real) + np.mean(logprobs_fake))


def example(seed):
    rs = np.random.RandomState(seed)
    gen_params, dsc_params = init_pair(rs)
    angles = rs.uniform(0, 2 * np.pi, size=BATCH)
    real_data = np.stack([np.cos(angles), np.sin(angles)], axis=1) + 0.05 * rs.randn(BATCH,
                                                                                      DATA_DIM)
    return dsc_params, gen_params, real_data, np.random.RandomState(70 + seed)
