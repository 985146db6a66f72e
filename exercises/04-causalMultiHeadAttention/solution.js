// Causal multi-head self-attention. x [B, T, d]; w* [d, d] stored [in, out].
function causalMultiHeadAttention(x, wq, wk, wv, wo, nHeads) {
  const q = splitHeads(matmul(x, wq), nHeads); // [B, H, T, dh]
  const k = splitHeads(matmul(x, wk), nHeads);
  const v = splitHeads(matmul(x, wv), nHeads);
  const heads = q.map((qb, b) => qb.map((qh, h) => causalAttention(qh, k[b][h], v[b][h])));
  return matmul(mergeHeads(heads), wo);         // [B, T, d]
}

// [B, T, in] @ [in, out] -> [B, T, out]
function matmul(x, w) {
  return x.map((rows) => rows.map((row) => w[0].map((_, j) => {
    let sum = 0;
    for (let i = 0; i < row.length; i++) sum += row[i] * w[i][j];
    return sum;
  })));
}

// [B, T, H * dh] -> [B, H, T, dh]
function splitHeads(y, H) {
  const dh = y[0][0].length / H;
  return y.map((rows) => Array.from({ length: H }, (_, h) => rows.map((row) => row.slice(h * dh, (h + 1) * dh))));
}

// [B, H, T, dh] -> [B, T, H * dh]
function mergeHeads(z) {
  return z.map((heads) => heads[0].map((_, t) => heads.flatMap((head) => head[t])));
}

// One head, T = S: q, k, v [T, dh] -> [T, dh]
function causalAttention(q, k, v) {
  const dh = q[0].length, scale = 1 / Math.sqrt(dh);
  return q.map((query, t) => {
    const scores = k.map((key, s) => (s <= t ? dot(query, key) * scale : -Infinity));
    const max = Math.max(...scores);
    const exps = scores.map((x) => Math.exp(x - max));
    const sum = exps.reduce((total, e) => total + e, 0);
    const out = new Array(dh).fill(0);
    exps.forEach((e, s) => {
      for (let j = 0; j < dh; j++) out[j] += (e / sum) * v[s][j];
    });
    return out;
  });
}

function dot(a, b) {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i] * b[i];
  return sum;
}
