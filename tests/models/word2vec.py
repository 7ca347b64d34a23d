"""Skip-gram with negative sampling: centre and context embeddings gathered
by word index (words repeat), negative samples drawn with rng.integers from a
np.random.Generator passed in, log-sigmoid scores."""

import numpy as np

NUM_NEGATIVE = 3


def log_sigmoid(x):
    return -np.logaddexp(0.0, -x)


def loss(embeddings, pairs, rng):
    W_in, W_out = embeddings
    centres, contexts = pairs[:, 0], pairs[:, 1]
    negatives = rng.integers(0, W_out.shape[0], size=(len(pairs), NUM_NEGATIVE))
    v = W_in[centres]
    positive = log_sigmoid(np.sum(v * W_out[contexts], axis=1))
    negative = log_sigmoid(-np.einsum('nd,nkd->nk', v, W_out[negatives])).sum(axis=1)
    return -np.mean(positive + negative)


def example(seed):
    rng = np.random.default_rng(seed)
    vocab, dim = 7, 3
    corpus = rng.integers(0, vocab, size=12)
    pairs = np.array([(corpus[i], corpus[i + d]) for i in range(len(corpus) - 1)
                      for d in (1,)])
    embeddings = (0.3 * rng.standard_normal((vocab, dim)), 0.3 * rng.standard_normal((vocab, dim)))
    return embeddings, pairs, np.random.default_rng(77 + seed)
