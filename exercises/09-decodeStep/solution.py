# One decode step. q, k_new, v_new [B, H, 1, D]; k_cache, v_cache [B, H, S, D].
# The new key and value join the cache first; then the new query reads all S + 1.
import numpy as np


def decode_step(q, k_cache, v_cache, k_new, v_new):
    keys = np.concatenate([k_cache, k_new], axis=2)        # [B, H, S + 1, D]
    values = np.concatenate([v_cache, v_new], axis=2)
    scores = q @ keys.swapaxes(-1, -2) / np.sqrt(q.shape[-1])   # [B, H, 1, S + 1]
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    out = e / e.sum(axis=-1, keepdims=True) @ values       # [B, H, 1, D]
    return {"out": out, "k_cache": keys, "v_cache": values}
