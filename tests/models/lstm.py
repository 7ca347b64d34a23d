"""LSTM sequence model: gates from one concatenate-and-multiply helper,
parameters in a dict, cells and hiddens carried through the loop, and a
log-softmax read-out at every step."""

import numpy as np

INPUT_SIZE, STATE_SIZE = 3, 4


def sigmoid(x):
    return 0.5 * (np.tanh(x) + 1.0)


def logsumexp(X, axis=1):
    max_X = np.max(X, axis=axis, keepdims=True)
    return max_X + np.log(np.sum(np.exp(X - max_X), axis=axis, keepdims=True))


def init_lstm_params(input_size, state_size, output_size, param_scale, rs):
    def rp(*shape):
        return rs.randn(*shape) * param_scale

    return {'init cells': rp(1, state_size),
            'init hiddens': rp(1, state_size),
            'change': rp(input_size + state_size + 1, state_size),
            'forget': rp(input_size + state_size + 1, state_size),
            'ingate': rp(input_size + state_size + 1, state_size),
            'outgate': rp(input_size + state_size + 1, state_size),
            'predict': rp(state_size + 1, output_size)}


def concat_and_multiply(weights, *args):
    cat_state = np.hstack(args + (np.ones((args[0].shape[0], 1)),))
    return np.dot(cat_state, weights)


def lstm_predict(params, inputs):
    def update_lstm(input, hiddens, cells):
        change = np.tanh(concat_and_multiply(params['change'], input, hiddens))
        forget = sigmoid(concat_and_multiply(params['forget'], input, hiddens))
        ingate = sigmoid(concat_and_multiply(params['ingate'], input, hiddens))
        outgate = sigmoid(concat_and_multiply(params['outgate'], input, hiddens))
        cells = cells * forget + ingate * change
        hiddens = outgate * np.tanh(cells)
        return hiddens, cells

    def hiddens_to_output_probs(hiddens):
        output = concat_and_multiply(params['predict'], hiddens)
        return output - logsumexp(output, axis=1)

    num_sequences = inputs.shape[1]
    hiddens = np.repeat(params['init hiddens'], num_sequences, axis=0)
    cells = np.repeat(params['init cells'], num_sequences, axis=0)

    output = [hiddens_to_output_probs(hiddens)]
    for input in inputs:
        hiddens, cells = update_lstm(input, hiddens, cells)
        output.append(hiddens_to_output_probs(hiddens))
    return output


def loss(params, inputs, targets):
    logprobs = lstm_predict(params, inputs)
    loglik = sum(np.sum(lp * tg) for lp, tg in zip(logprobs[1:], targets))
    return -loglik / targets.size


def example(seed):
    rs = np.random.RandomState(100 + seed)
    params = init_lstm_params(INPUT_SIZE, STATE_SIZE, INPUT_SIZE, 0.4, rs)
    seq = rs.randint(0, INPUT_SIZE, size=(6, 2))
    onehot = np.eye(INPUT_SIZE)[seq]
    return params, onehot[:-1], onehot[1:]
