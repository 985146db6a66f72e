# The mistake under test (flops_counted_macs): a multiply-add is counted as one operation.
# FLOPs of one attention layer over T tokens at width d (a multiply-add is 2):
# four projections [T, d] @ [d, d]; Q K^T is [T, d] @ [d, T]; P V is [T, T] @ [T, d].


def attention_flops(d, T):
    return {
        "projections": 4 * T * d * d,
        "scores": T * T * d,
        "weighted": T * T * d,
    }
