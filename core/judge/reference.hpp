// The correct answer to every exercise, computed by the core's own operations
// (the same functions the decoder runs), in double precision.
#pragma once

#include "values.hpp"

namespace anatomy::judge {

Nd softmax_reference(const Nd& x);                                            // x [R, C], over each row
Nd softmax_with_sink_reference(const Nd& x, double sink);                     // x [R, C], a sink logit joining each row
Nd attention_reference(const Nd& q, const Nd& k, const Nd& v, bool causal);   // [B,Hq,T,D], [B,Hkv,S,D]
Nd sliding_window_reference(const Nd& q, const Nd& k, const Nd& v, int window);
Nd causal_mha_reference(const Nd& x, const Nd& wq, const Nd& wk, const Nd& wv, const Nd& wo, int n_heads);
Nd rmsnorm_reference(const Nd& x, const Nd& weight, double eps);
Nd rope_reference(const Nd& x, const Nd& positions, double theta);
Nd swiglu_reference(const Nd& x, const Nd& w_gate, const Nd& w_up, const Nd& w_down);
// decodeStep: {out [B,H,1,D], kCache [B,H,S+1,D], vCache [B,H,S+1,D]}
json decode_step_reference(const Nd& q, const Nd& k_cache, const Nd& v_cache, const Nd& k_new, const Nd& v_new);
// attentionFlops: {projections: 8Td^2, scores: 2T^2 d, weighted: 2T^2 d}
json attention_flops_reference(double d, double T);

}  // namespace anatomy::judge
