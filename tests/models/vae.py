"""Variational autoencoder for binary data: MLP encoder giving a mean and a
log standard deviation, a reparameterised sample drawn from a
np.random.Generator passed in, a Bernoulli decoder and the analytic KL."""

import numpy as np

LATENT_DIM = 2


def init_net_params(scale, layer_sizes, rng):
    return [(scale * rng.standard_normal((m, n)), scale * rng.standard_normal(n))
            for m, n in zip(layer_sizes[:-1], layer_sizes[1:])]


def relu(x):
    return np.maximum(0, x)


def neural_net_predict(params, inputs):
    for W, b in params[:-1]:
        inputs = relu(np.dot(inputs, W) + b)
    W, b = params[-1]
    return np.dot(inputs, W) + b


def nn_predict_gaussian(params, inputs):
    outputs = neural_net_predict(params, inputs)
    return outputs[:, :LATENT_DIM], outputs[:, LATENT_DIM:]


def sample_diag_gaussian(mean, log_std, rng):
    return mean + np.exp(log_std) * rng.standard_normal(mean.shape)


def bernoulli_log_density(targets, unnormalized_logprobs):
    # targets are 0/1; logaddexp(0, x) is log(1 + e^x)
    return np.sum(targets * unnormalized_logprobs
                  - np.logaddexp(0.0, unnormalized_logprobs), axis=-1)


def diag_gaussian_kl(mean, log_std):
    return 0.5 * np.sum(np.exp(2 * log_std) + mean ** 2 - 1.0 - 2 * log_std, axis=-1)


def loss(encoder_params, decoder_params, data, rng):
    q_means, q_log_stds = nn_predict_gaussian(encoder_params, data)
    latents = sample_diag_gaussian(q_means, q_log_stds, rng)
    logits = neural_net_predict(decoder_params, latents)
    elbo = bernoulli_log_density(data, logits) - diag_gaussian_kl(q_means, q_log_stds)
    return -np.mean(elbo)


def example(seed):
    rng = np.random.default_rng(seed)
    data_dim, hidden = 6, 5
    encoder = init_net_params(0.5, [data_dim, hidden, 2 * LATENT_DIM], rng)
    decoder = init_net_params(0.5, [LATENT_DIM, hidden, data_dim], rng)
    data = (rng.random((4, data_dim)) > 0.5).astype(float)
    return encoder, decoder, data, np.random.default_rng(1000 + seed)
