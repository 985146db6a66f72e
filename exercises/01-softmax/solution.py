# softmax over each row of x [R, C]. Subtracting the row's maximum keeps every
# exponent <= 0, so nothing overflows; exp(-inf) is 0, so a masked entry gets no weight.
import numpy as np


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
