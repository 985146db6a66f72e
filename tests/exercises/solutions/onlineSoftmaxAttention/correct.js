// Causal attention computed one block of keys at a time, the way FlashAttention
// does: keep a running maximum m, a running sum l and an accumulator, and rescale
// both by exp(mOld - mNew) whenever a block raises the maximum.
// q [B, H, T, D], k and v [B, H, S, D]; query t sits at position t + (S - T).
function onlineSoftmaxAttention(q, k, v, blockSize) {
  const T = q[0][0].length, D = q[0][0][0].length, S = k[0][0].length;
  const scale = 1 / Math.sqrt(D);
  return q.map((heads, b) => heads.map((rows, h) => rows.map((query, t) => {
    let m = -Infinity;
    let l = 0;
    let acc = new Array(D).fill(0);
    for (let start = 0; start < S; start += blockSize) {
      const end = Math.min(S, start + blockSize);
      const scores = [];
      for (let s = start; s < end; s++) {
        let dot = 0;
        for (let d = 0; d < D; d++) dot += query[d] * k[b][h][s][d];
        scores.push(s <= t + (S - T) ? dot * scale : -Infinity);
      }
      const mNew = Math.max(m, ...scores);
      if (mNew === -Infinity) continue; // nothing visible yet
      const correction = Math.exp(m - mNew);
      l *= correction;
      acc = acc.map((a) => a * correction);
      for (let s = start; s < end; s++) {
        const p = Math.exp(scores[s - start] - mNew);
        l += p;
        for (let d = 0; d < D; d++) acc[d] += p * v[b][h][s][d];
      }
      m = mNew;
    }
    return acc.map((a) => a / l);
  })));
}
