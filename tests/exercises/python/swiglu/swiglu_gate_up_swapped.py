# The mistake under test (swiglu_gate_up_swapped): silu is applied to x @ w_up instead of x @ w_gate.
# SwiGLU feed-forward: (silu(x @ w_gate) * (x @ w_up)) @ w_down.
# x [B, T, d]; w_gate, w_up [d, F]; w_down [F, d].
import numpy as np


def swiglu(x, w_gate, w_up, w_down):
    gate = x @ w_gate                                      # [B, T, F]
    up = x @ w_up
    return (silu(up) * gate) @ w_down                      # [B, T, d]


def silu(a):
    return a / (1 + np.exp(-a))
