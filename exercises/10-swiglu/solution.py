# SwiGLU feed-forward: (silu(x @ w_gate) * (x @ w_up)) @ w_down.
# x [B, T, d]; w_gate, w_up [d, F]; w_down [F, d].
import numpy as np


def swiglu(x, w_gate, w_up, w_down):
    gate = x @ w_gate                                      # [B, T, F]
    up = x @ w_up
    return (silu(gate) * up) @ w_down                      # [B, T, d]


def silu(a):
    return a / (1 + np.exp(-a))
