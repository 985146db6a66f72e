# RMSNorm over the last axis. x [B, T, d], weight [d].
import numpy as np


def rmsnorm(x, weight, eps):
    rms = np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)
    return x / rms * weight
