# Causal sliding-window attention. q [B, H, T, D], k and v [B, H, S, D]. Query t
# stands at position p = t + (S - T) and reads the `window` keys p - window + 1 .. p.
import numpy as np


def sliding_window_attention(q, k, v, window):
    T, D = q.shape[-2:]
    S = k.shape[-2]
    p = np.arange(T)[:, None] + (S - T)                    # [T, 1]
    s = np.arange(S)[None, :]                              # [1, S]
    visible = (s <= p) & (s > p - window)                  # [T, S]
    scores = q @ k.swapaxes(-1, -2) / np.sqrt(D)
    scores = np.where(visible, scores, -np.inf)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True) @ v
