// One decode step. q, kNew, vNew [B, H, 1, D]; kCache, vCache [B, H, S, D].
function decodeStep(q, kCache, vCache, kNew, vNew) {
  const keys = kCache.map((heads, b) => heads.map((rows, h) => [...rows, ...kNew[b][h]]));     // [B, H, S + 1, D]
  const values = vCache.map((heads, b) => heads.map((rows, h) => [...rows, ...vNew[b][h]]));   // [B, H, S + 1, D]
  const D = q[0][0][0].length, scale = 1 / Math.sqrt(D);
  const out = q.map((heads, b) => heads.map((queries, h) => queries.map((query) => {
    const scores = keys[b][h].map((key) => {
      let dot = 0;
      for (let d = 0; d < D; d++) dot += query[d] * key[d];
      return dot * scale;
    });
    const max = Math.max(...scores);
    const exps = scores.map((x) => Math.exp(x - max));
    const sum = exps.reduce((total, e) => total + e, 0);
    const result = new Array(D).fill(0);
    exps.forEach((e, s) => {
      for (let d = 0; d < D; d++) result[d] += (e / sum) * values[b][h][s][d];
    });
    return result;
  })));
  return { out, kCache: keys, vCache: values };
}
