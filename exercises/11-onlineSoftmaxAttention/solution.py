# Causal attention one block of keys at a time, as FlashAttention does: a running
# maximum m, a running sum l and an accumulator, both rescaled by exp(m_old - m_new)
# whenever a block raises the maximum. q [B, H, T, D], k and v [B, H, S, D].
import numpy as np


def online_softmax_attention(q, k, v, block_size):
    B, H, T, D = q.shape
    S = k.shape[2]
    position = np.arange(T)[:, None] + (S - T)             # [T, 1]
    m = np.full((B, H, T, 1), -np.inf)
    l = np.zeros((B, H, T, 1))
    acc = np.zeros((B, H, T, D))
    for start in range(0, S, block_size):
        end = min(S, start + block_size)
        scores = q @ k[:, :, start:end].swapaxes(-1, -2) / np.sqrt(D)   # [B, H, T, Bc]
        scores = np.where(np.arange(start, end)[None, :] <= position, scores, -np.inf)
        m_new = np.maximum(m, scores.max(axis=-1, keepdims=True))
        base = np.where(np.isinf(m_new), 0.0, m_new)       # a row that sees nothing yet stays 0
        correction = np.exp(m - base)
        p = np.exp(scores - base)
        l = l * correction + p.sum(axis=-1, keepdims=True)
        acc = acc * correction + p @ v[:, :, start:end]
        m = m_new
    return acc / l
