"""Character-level tanh RNN: parameters in a dict with spaced keys, one-hot
inputs of shape (time, sequences, characters), a log-softmax output layer
through logsumexp, and the hidden state carried over a Python loop."""

import numpy as np

INPUT_SIZE, STATE_SIZE, OUTPUT_SIZE = 4, 5, 4


def logsumexp(X, axis, keepdims=False):
    max_X = np.max(X, axis=axis, keepdims=True)
    return max_X + np.log(np.sum(np.exp(X - max_X), axis=axis, keepdims=True))


def create_rnn_params(input_size, state_size, output_size, param_scale, rs):
    return {'init hiddens': rs.randn(1, state_size) * param_scale,
            'change': rs.randn(input_size + state_size + 1, state_size) * param_scale,
            'predict': rs.randn(state_size + 1, output_size) * param_scale}


def concat_and_multiply(weights, *args):
    cat_state = np.hstack(args + (np.ones((args[0].shape[0], 1)),))
    return np.dot(cat_state, weights)


def rnn_predict(params, inputs):
    def update_rnn(input, hiddens):
        return np.tanh(concat_and_multiply(params['change'], input, hiddens))

    def hiddens_to_output_probs(hiddens):
        output = concat_and_multiply(params['predict'], hiddens)
        return output - logsumexp(output, axis=1, keepdims=True)

    num_sequences = inputs.shape[1]
    hiddens = np.repeat(params['init hiddens'], num_sequences, axis=0)
    output = [hiddens_to_output_probs(hiddens)]
    for input in inputs:
        hiddens = update_rnn(input, hiddens)
        output.append(hiddens_to_output_probs(hiddens))
    return output


def rnn_log_likelihood(params, inputs, targets):
    logprobs = rnn_predict(params, inputs)
    loglik = 0.0
    num_time_steps, num_examples, _ = inputs.shape
    for t in range(num_time_steps):
        loglik += np.sum(logprobs[t + 1] * targets[t])
    return loglik / (num_time_steps * num_examples)


def loss(params, inputs, targets):
    return -rnn_log_likelihood(params, inputs, targets)


def one_hot(indices, size):
    return np.array(indices[..., None] == np.arange(size), dtype=float)


def example(seed):
    rs = np.random.RandomState(seed)
    params = create_rnn_params(INPUT_SIZE, STATE_SIZE, OUTPUT_SIZE, 0.5, rs)
    text = rs.randint(0, INPUT_SIZE, size=(6, 3))
    inputs = one_hot(text[:-1], INPUT_SIZE)
    targets = one_hot(text[1:], OUTPUT_SIZE)
    return params, inputs, targets
