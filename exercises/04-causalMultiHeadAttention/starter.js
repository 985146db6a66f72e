// x: [B, T, d]; wq, wk, wv, wo: [d, d] stored [in, out]; nHeads divides d.
// Returns [B, T, d].
function causalMultiHeadAttention(x, wq, wk, wv, wo, nHeads) {
  throw new Error('not implemented');
}
