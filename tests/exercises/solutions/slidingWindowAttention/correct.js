// Causal sliding-window attention. q [B, H, T, D], k and v [B, H, S, D].
// Query t sits at position p = t + (S - T) and reads the `window` keys ending at
// p: positions p - window + 1 .. p.
function slidingWindowAttention(q, k, v, window) {
  const T = q[0][0].length, D = q[0][0][0].length, S = k[0][0].length;
  const scale = 1 / Math.sqrt(D);
  return q.map((heads, b) => heads.map((rows, h) => rows.map((query, t) => {
    const p = t + (S - T);
    const scores = [];
    for (let s = 0; s < S; s++) {
      let dot = 0;
      for (let d = 0; d < D; d++) dot += query[d] * k[b][h][s][d];
      const visible = s <= p && s > p - window;
      scores.push(visible ? dot * scale : -Infinity);
    }
    const weights = softmaxRow(scores);
    const out = new Array(D).fill(0);
    for (let s = 0; s < S; s++) {
      for (let d = 0; d < D; d++) out[d] += weights[s] * v[b][h][s][d];
    }
    return out;
  })));
}

function softmaxRow(scores) {
  const max = Math.max(...scores);
  const exps = scores.map((x) => Math.exp(x - max));
  const sum = exps.reduce((a, e) => a + e, 0);
  return exps.map((e) => e / sum);
}
