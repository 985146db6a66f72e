# The mistake under test (rms_mean_subtracted): the row is centred first, as in LayerNorm.
# RMSNorm over the last axis. x [B, T, d], weight [d].
import numpy as np


def rmsnorm(x, weight, eps):
    x = x - x.mean(axis=-1, keepdims=True)
    rms = np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)
    return x / rms * weight
