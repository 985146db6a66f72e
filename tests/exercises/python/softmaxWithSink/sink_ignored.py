# A plain softmax: the sink never enters the sum.
import numpy as np


def softmax_with_sink(x, sink):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
