// Causal attention over the last window positions. q [B, H, T, D], k, v [B, H, S, D].
function slidingWindowAttention(q, k, v, window) {
  const T = q[0][0].length, D = q[0][0][0].length, S = k[0][0].length;
  const scale = 1 / Math.sqrt(D);
  return q.map((heads, b) => heads.map((queries, h) => queries.map((query, t) => {
    const p = t + (S - T); // the query's position
    const scores = k[b][h].map((key, s) => {
      if (s > p || s <= p - window) return -Infinity;
      let dot = 0;
      for (let d = 0; d < D; d++) dot += query[d] * key[d];
      return dot * scale;
    });
    const max = Math.max(...scores);
    const exps = scores.map((x) => Math.exp(x - max));
    const sum = exps.reduce((total, e) => total + e, 0);
    const out = new Array(D).fill(0);
    exps.forEach((e, s) => {
      for (let d = 0; d < D; d++) out[d] += (e / sum) * v[b][h][s][d];
    });
    return out;
  })));
}
