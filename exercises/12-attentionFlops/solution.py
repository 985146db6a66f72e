# FLOPs of one attention layer over T tokens at width d (a multiply-add is 2):
# four projections [T, d] @ [d, d]; Q K^T is [T, d] @ [d, T]; P V is [T, T] @ [T, d].


def attention_flops(d, T):
    return {
        "projections": 4 * 2 * T * d * d,
        "scores": 2 * T * T * d,
        "weighted": 2 * T * T * d,
    }
