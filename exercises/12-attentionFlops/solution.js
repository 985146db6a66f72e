// FLOPs of one attention layer, a multiply-add counted as 2.
function attentionFlops(d, T) {
  return {
    projections: 4 * (2 * T * d * d), // Q, K, V, O: [T, d] @ [d, d] each
    scores: 2 * T * T * d,            // Q K^T: [T, dh] @ [dh, T] per head, heads summing to d
    weighted: 2 * T * T * d,          // P V: [T, T] @ [T, dh] per head
  };
}
// Attention's own part, 4 T^2 d, overtakes the projections, 8 T d^2, at T = 2d.
