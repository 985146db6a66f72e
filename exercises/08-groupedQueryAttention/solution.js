// Causal grouped-query attention. q [B, Hq, T, D], k and v [B, Hkv, S, D].
function groupedQueryAttention(q, k, v) {
  const Hq = q[0].length, T = q[0][0].length, D = q[0][0][0].length;
  const Hkv = k[0].length, S = k[0][0].length;
  const group = Hq / Hkv;
  const scale = 1 / Math.sqrt(D);
  return q.map((heads, b) => heads.map((queries, h) => {
    const g = Math.floor(h / group); // the KV head this query head reads
    return queries.map((query, t) => {
      const scores = k[b][g].map((key, s) => {
        if (s > t + (S - T)) return -Infinity;
        let dot = 0;
        for (let d = 0; d < D; d++) dot += query[d] * key[d];
        return dot * scale;
      });
      const max = Math.max(...scores);
      const exps = scores.map((x) => Math.exp(x - max));
      const sum = exps.reduce((total, e) => total + e, 0);
      const out = new Array(D).fill(0);
      exps.forEach((e, s) => {
        for (let d = 0; d < D; d++) out[d] += (e / sum) * v[b][g][s][d];
      });
      return out;
    });
  }));
}
