// The mistake under test (decode_cache_not_extended): the caches are returned as they came in.
// One decode step. q, kNew, vNew [B, H, 1, D]; kCache, vCache [B, H, S, D].
// The new key and value join the cache first, then the new query reads all S + 1.
function decodeStep(q, kCache, vCache, kNew, vNew) {
  const keys = kCache.map((heads, b) => heads.map((rows, h) => [...rows, ...kNew[b][h]]));
  const values = vCache.map((heads, b) => heads.map((rows, h) => [...rows, ...vNew[b][h]]));
  const D = q[0][0][0].length;
  const scale = 1 / Math.sqrt(D);
  const out = q.map((heads, b) => heads.map((rows, h) => rows.map((query) => {
    const scores = keys[b][h].map((key) => {
      let dot = 0;
      for (let d = 0; d < D; d++) dot += query[d] * key[d];
      return dot * scale;
    });
    const weights = softmaxRow(scores);
    const result = new Array(D).fill(0);
    weights.forEach((w, s) => {
      for (let d = 0; d < D; d++) result[d] += w * values[b][h][s][d];
    });
    return result;
  })));
  return { out, kCache, vCache };
}

function softmaxRow(scores) {
  const max = Math.max(...scores);
  const exps = scores.map((x) => Math.exp(x - max));
  const sum = exps.reduce((a, e) => a + e, 0);
  return exps.map((e) => e / sum);
}
