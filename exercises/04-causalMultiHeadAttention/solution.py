# Causal multi-head self-attention. x [B, T, d]; wq, wk, wv, wo [d, d] stored
# [in, out], so a projection is x @ w; d splits into n_heads heads of dh = d / n_heads.
import numpy as np


def causal_multi_head_attention(x, wq, wk, wv, wo, n_heads):
    B, T, d = x.shape
    dh = d // n_heads

    def split_heads(y):  # [B, T, d] -> [B, H, T, dh]
        return y.reshape(B, T, n_heads, dh).transpose(0, 2, 1, 3)

    q, k, v = split_heads(x @ wq), split_heads(x @ wk), split_heads(x @ wv)
    scores = q @ k.swapaxes(-1, -2) / np.sqrt(dh)          # [B, H, T, T]
    scores = np.where(np.tril(np.ones((T, T), dtype=bool)), scores, -np.inf)
    heads = softmax(scores) @ v                            # [B, H, T, dh]
    return heads.transpose(0, 2, 1, 3).reshape(B, T, d) @ wo


def softmax(scores):
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
