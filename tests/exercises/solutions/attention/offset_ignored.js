// The mistake under test (offset_ignored): the mask compares s with t, forgetting the S - T cached positions.
// Scaled dot-product attention. q [B, H, T, D], k and v [B, H, S, D].
// With a cache, the T queries are the last T of S positions, so query t sits at
// position t + (S - T) and may read keys up to there.
function attention(q, k, v, causal) {
  const B = q.length, H = q[0].length, T = q[0][0].length, D = q[0][0][0].length;
  const S = k[0][0].length;
  const scale = 1 / Math.sqrt(D);
  const out = [];
  for (let b = 0; b < B; b++) {
    const heads = [];
    for (let h = 0; h < H; h++) {
      const rows = [];
      for (let t = 0; t < T; t++) {
        const scores = [];
        for (let s = 0; s < S; s++) {
          let dot = 0;
          for (let d = 0; d < D; d++) dot += q[b][h][t][d] * k[b][h][s][d];
          const visible = !causal || s <= t;
          scores.push(visible ? dot * scale : -Infinity);
        }
        const weights = softmaxRow(scores);
        const row = new Array(D).fill(0);
        for (let s = 0; s < S; s++) {
          for (let d = 0; d < D; d++) row[d] += weights[s] * v[b][h][s][d];
        }
        rows.push(row);
      }
      heads.push(rows);
    }
    out.push(heads);
  }
  return out;
}

function softmaxRow(scores) {
  const max = Math.max(...scores);
  const exps = scores.map((x) => Math.exp(x - max));
  const sum = exps.reduce((a, e) => a + e, 0);
  return exps.map((e) => e / sum);
}
