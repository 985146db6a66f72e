// q: [B, H, T, D]; k, v: [B, H, S, D] with S >= T; causal: boolean.
// Returns [B, H, T, D]. Query t stands at position t + (S - T).
function attention(q, k, v, causal) {
  throw new Error('not implemented');
}
