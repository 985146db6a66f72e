// softmax(q k^T / sqrt(D) + M) v. q [B, H, T, D], k and v [B, H, S, D].
// Query t stands at position t + (S - T); causally it reads keys s <= t + (S - T).
function attention(q, k, v, causal) {
  const T = q[0][0].length, D = q[0][0][0].length, S = k[0][0].length;
  const scale = 1 / Math.sqrt(D);
  return q.map((heads, b) => heads.map((queries, h) => queries.map((query, t) => {
    const keys = k[b][h], values = v[b][h];
    const scores = keys.map((key, s) => {
      if (causal && s > t + (S - T)) return -Infinity;
      let dot = 0;
      for (let d = 0; d < D; d++) dot += query[d] * key[d];
      return dot * scale;
    });
    const weights = softmaxRow(scores);
    const out = new Array(D).fill(0);
    weights.forEach((w, s) => {
      for (let d = 0; d < D; d++) out[d] += w * values[s][d];
    });
    return out;
  })));
}

function softmaxRow(scores) {
  const max = Math.max(...scores);
  const exps = scores.map((x) => Math.exp(x - max));
  const sum = exps.reduce((total, e) => total + e, 0);
  return exps.map((e) => e / sum);
}
