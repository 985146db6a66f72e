// q: [B, H, T, D]; k, v: [B, H, S, D] with S >= T; window >= 1.
// Returns [B, H, T, D]. Query t stands at p = t + (S - T) and reads keys p - window + 1 .. p.
function slidingWindowAttention(q, k, v, window) {
  throw new Error('not implemented');
}
