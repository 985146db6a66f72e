# Grouped-query attention, causal. q [B, Hq, T, D], k and v [B, Hkv, S, D]: each
# run of Hq / Hkv consecutive query heads reads one KV head. Query t stands at t + (S - T).
import numpy as np


def grouped_query_attention(q, k, v):
    Hq, T, D = q.shape[1:]
    Hkv, S = k.shape[1:3]
    kv_head = np.arange(Hq) // (Hq // Hkv)                 # [Hq]: the KV head of each query head
    k, v = k[:, kv_head], v[:, kv_head]                    # [B, Hq, S, D]
    scores = q @ k.swapaxes(-1, -2) / np.sqrt(D)           # [B, Hq, T, S]
    visible = np.arange(S)[None, :] <= np.arange(T)[:, None] + (S - T)
    scores = np.where(visible, scores, -np.inf)
    return softmax(scores) @ v


def softmax(scores):
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
