// q: [B, H, T, D]; k, v: [B, H, S, D]; keys are visited blockSize at a time.
// Returns [B, H, T, D], equal to causal attention with query t at position t + (S - T).
function onlineSoftmaxAttention(q, k, v, blockSize) {
  throw new Error('not implemented');
}
