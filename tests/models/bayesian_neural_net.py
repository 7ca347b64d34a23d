"""Bayesian neural net fitted by black-box VI: weights for several samples
at once, unpacked layer by layer by a generator, a batched einsum forward
pass, and reparameterised samples from a RandomState passed in."""

import numpy as np

LAYER_SIZES = [1, 4, 1]
L2_REG, NOISE_VARIANCE, NUM_SAMPLES = 0.1, 0.05, 3


def make_nn_funs(layer_sizes, L2_reg, noise_variance, nonlinearity=np.tanh):
    shapes = list(zip(layer_sizes[:-1], layer_sizes[1:]))
    num_weights = sum((m + 1) * n for m, n in shapes)

    def unpack_layers(weights):
        num_weight_sets = len(weights)
        for m, n in shapes:
            yield (weights[:, :m * n].reshape((num_weight_sets, m, n)),
                   weights[:, m * n:m * n + n].reshape((num_weight_sets, 1, n)))
            weights = weights[:, (m + 1) * n:]

    def predictions(weights, inputs):
        inputs = np.expand_dims(inputs, 0)
        for W, b in unpack_layers(weights):
            outputs = np.einsum('mnd,mdo->mno', inputs, W) + b
            inputs = nonlinearity(outputs)
        return outputs

    def logprob(weights, inputs, targets):
        log_prior = -L2_reg * np.sum(weights ** 2, axis=1)
        preds = predictions(weights, inputs)
        log_lik = -np.sum((preds - targets) ** 2, axis=1)[:, 0] / noise_variance
        return log_prior + log_lik

    return num_weights, predictions, logprob


NUM_WEIGHTS, predictions, logprob = make_nn_funs(LAYER_SIZES, L2_REG, NOISE_VARIANCE)


def loss(var_params, inputs, targets, rs):
    mean, log_std = var_params[:NUM_WEIGHTS], var_params[NUM_WEIGHTS:]
    samples = rs.randn(NUM_SAMPLES, NUM_WEIGHTS) * np.exp(log_std) + mean
    entropy = 0.5 * NUM_WEIGHTS * (1.0 + np.log(2 * np.pi)) + np.sum(log_std)
    return -(entropy + np.mean(logprob(samples, inputs, targets)))


def example(seed):
    rs = np.random.RandomState(seed)
    inputs = np.linspace(-1, 1, 8).reshape(8, 1)
    targets = np.cos(3 * inputs) + 0.1 * rs.randn(8, 1)
    var_params = np.concatenate([0.5 * rs.randn(NUM_WEIGHTS), -2 * np.ones(NUM_WEIGHTS)])
    return var_params, inputs, targets, np.random.RandomState(20 + seed)
