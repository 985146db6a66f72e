# Rotary position embedding, half-split pairing: channel i turns together with
# channel i + D/2, by the angle position * theta^(-2i / D). x [B, H, T, D], positions [T].
import numpy as np


def rope(x, positions, theta):
    D = x.shape[-1]
    half = D // 2
    freqs = theta ** (-2.0 * np.arange(half) / D)          # [D/2]
    angles = positions[:, None] * freqs[None, :]           # [T, D/2]
    cos, sin = np.cos(angles), np.sin(angles)
    a, b = x[..., :half], x[..., half:]
    return np.concatenate([a * cos - b * sin, a * sin + b * cos], axis=-1)
