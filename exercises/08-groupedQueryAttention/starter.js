// q: [B, Hq, T, D]; k, v: [B, Hkv, S, D]; Hkv divides Hq; S >= T.
// Returns [B, Hq, T, D]. Causal, with query t at position t + (S - T).
function groupedQueryAttention(q, k, v) {
  throw new Error('not implemented');
}
