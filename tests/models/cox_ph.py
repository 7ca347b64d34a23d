"""Cox proportional-hazards partial likelihood (Breslow, no ties): samples
ordered by decreasing time, risk-set sums as a reversed cumulative sum, the
log of each risk set subtracted for the observed events."""

import numpy as np


def loss(beta, X, times, events):
    order = np.argsort(-times)
    X, events = X[order], events[order]
    risk = X @ beta
    log_risk_set = np.log(np.cumsum(np.exp(risk)))
    partial = np.sum((risk - log_risk_set) * events)
    return -partial / np.sum(events) + 0.01 * beta @ beta


def example(seed):
    rs = np.random.RandomState(seed)
    X = rs.randn(12, 3)
    times = rs.exponential(np.exp(-X @ np.array([0.5, -0.3, 0.0])))
    events = (rs.rand(12) < 0.7).astype(float)
    return 0.1 * rs.randn(3), X, times, events
