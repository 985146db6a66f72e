// Causal attention, keys visited block by block with a running max m and sum l.
// q [B, H, T, D], k and v [B, H, S, D].
function onlineSoftmaxAttention(q, k, v, blockSize) {
  const T = q[0][0].length, D = q[0][0][0].length, S = k[0][0].length;
  const scale = 1 / Math.sqrt(D);
  return q.map((heads, b) => heads.map((queries, h) => queries.map((query, t) => {
    let m = -Infinity, l = 0;
    const acc = new Array(D).fill(0);
    for (let start = 0; start < S; start += blockSize) {
      const end = Math.min(S, start + blockSize);
      const scores = [];
      for (let s = start; s < end; s++) {
        let dot = 0;
        for (let d = 0; d < D; d++) dot += query[d] * k[b][h][s][d];
        scores.push(s <= t + (S - T) ? dot * scale : -Infinity);
      }
      const mNew = Math.max(m, ...scores);
      if (mNew === -Infinity) continue;          // nothing visible yet
      const correction = Math.exp(m - mNew);     // rescale what was summed against m
      l *= correction;
      for (let d = 0; d < D; d++) acc[d] *= correction;
      scores.forEach((score, i) => {
        const p = Math.exp(score - mNew);
        l += p;
        for (let d = 0; d < D; d++) acc[d] += p * v[b][h][start + i][d];
      });
      m = mNew;
    }
    return acc.map((a) => a / l);
  })));
}
