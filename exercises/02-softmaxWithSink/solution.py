# Softmax of each row of x [R, C] with one more column, the sink, that has no value:
# the maximum is taken over the keys and the sink, so nothing overflows and a row of
# -inf gives all zeros; the sink's exp joins the sum only.
import numpy as np


def softmax_with_sink(x, sink):
    m = np.maximum(x.max(axis=-1, keepdims=True), sink)
    e = np.exp(x - m)
    return e / (e.sum(axis=-1, keepdims=True) + np.exp(sink - m))
