# Scaled dot-product attention. q [B, H, T, D], k and v [B, H, S, D].
# With a cache the T queries are the last T of S positions: query t stands at
# position t + (S - T) and may read keys up to there.
import numpy as np


def attention(q, k, v, causal):
    T, D = q.shape[-2:]
    S = k.shape[-2]
    scores = q @ k.swapaxes(-1, -2) / np.sqrt(D)          # [B, H, T, S]
    if causal:
        scores = np.where(causal_mask(T, S), scores, -np.inf)
    return softmax(scores) @ v                             # [B, H, T, D]


def causal_mask(T, S):
    # [T, S]: True where query t may read key s.
    return np.arange(S)[None, :] <= np.arange(T)[:, None] + (S - T)


def softmax(scores):
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
