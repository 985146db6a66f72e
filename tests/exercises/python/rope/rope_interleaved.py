# The mistake under test (rope_interleaved): channels 2i and 2i + 1 are rotated together.
# Rotary position embedding, half-split pairing: channel i turns together with
# channel i + D/2, by the angle position * theta^(-2i / D). x [B, H, T, D], positions [T].
import numpy as np


def rope(x, positions, theta):
    D = x.shape[-1]
    half = D // 2
    freqs = theta ** (-2.0 * np.arange(half) / D)          # [D/2]
    angles = positions[:, None] * freqs[None, :]           # [T, D/2]
    cos, sin = np.cos(angles), np.sin(angles)
    a, b = x[..., 0::2], x[..., 1::2]
    return np.stack([a * cos - b * sin, a * sin + b * cos], axis=-1).reshape(x.shape)
