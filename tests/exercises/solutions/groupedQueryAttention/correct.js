// Grouped-query attention, causal. q [B, Hq, T, D], k and v [B, Hkv, S, D].
// Hq / Hkv consecutive query heads share one KV head; with a cache, query t sits
// at position t + (S - T).
function groupedQueryAttention(q, k, v) {
  const Hq = q[0].length, T = q[0][0].length, D = q[0][0][0].length;
  const Hkv = k[0].length, S = k[0][0].length;
  const group = Hq / Hkv;
  const scale = 1 / Math.sqrt(D);
  return q.map((heads, b) => heads.map((rows, h) => {
    const g = Math.floor(h / group);
    return rows.map((query, t) => {
      const scores = [];
      for (let s = 0; s < S; s++) {
        let dot = 0;
        for (let d = 0; d < D; d++) dot += query[d] * k[b][g][s][d];
        scores.push(s <= t + (S - T) ? dot * scale : -Infinity);
      }
      const weights = softmaxRow(scores);
      const out = new Array(D).fill(0);
      for (let s = 0; s < S; s++) {
        for (let d = 0; d < D; d++) out[d] += weights[s] * v[b][g][s][d];
      }
      return out;
    });
  }));
}

function softmaxRow(scores) {
  const max = Math.max(...scores);
  const exps = scores.map((x) => Math.exp(x - max));
  const sum = exps.reduce((a, e) => a + e, 0);
  return exps.map((e) => e / sum);
}
