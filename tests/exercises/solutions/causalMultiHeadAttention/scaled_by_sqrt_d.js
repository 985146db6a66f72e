// The mistake under test (scaled_by_sqrt_d): the scores are divided by sqrt(d), the model
// width, instead of sqrt(dh), the head size.
// Causal multi-head self-attention. x [B, T, d]; wq, wk, wv, wo [d, d] stored
// [in, out], so a projection is x @ w. d splits into nHeads heads of d / nHeads.
function causalMultiHeadAttention(x, wq, wk, wv, wo, nHeads) {
  const q = splitHeads(matmul(x, wq), nHeads); // [B, H, T, dh]
  const k = splitHeads(matmul(x, wk), nHeads);
  const v = splitHeads(matmul(x, wv), nHeads);
  const d = x[0][0].length;
  const heads = causalAttention(q, k, v, 1 / Math.sqrt(d)); // [B, H, T, dh]
  return matmul(mergeHeads(heads), wo);        // [B, T, d]
}

// [B, T, in] @ [in, out] -> [B, T, out]
function matmul(x, w) {
  const n = w.length, m = w[0].length;
  return x.map((rows) => rows.map((row) => {
    const out = new Array(m).fill(0);
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < m; j++) out[j] += row[i] * w[i][j];
    }
    return out;
  }));
}

// [B, T, H * dh] -> [B, H, T, dh]: channel h * dh + j of position t is head h's channel j.
function splitHeads(y, H) {
  const T = y[0].length, dh = y[0][0].length / H;
  return y.map((rows) => {
    const heads = [];
    for (let h = 0; h < H; h++) {
      const perHead = [];
      for (let t = 0; t < T; t++) perHead.push(rows[t].slice(h * dh, (h + 1) * dh));
      heads.push(perHead);
    }
    return heads;
  });
}

// [B, H, T, dh] -> [B, T, H * dh]: the heads of one position side by side.
function mergeHeads(z) {
  const H = z[0].length, T = z[0][0].length;
  return z.map((heads) => {
    const rows = [];
    for (let t = 0; t < T; t++) {
      const row = [];
      for (let h = 0; h < H; h++) row.push(...heads[h][t]);
      rows.push(row);
    }
    return rows;
  });
}

function causalAttention(q, k, v, scale) {
  const T = q[0][0].length, D = q[0][0][0].length;
  return q.map((heads, b) => heads.map((rows, h) => rows.map((query, t) => {
    const scores = [];
    for (let s = 0; s < T; s++) {
      let dot = 0;
      for (let d = 0; d < D; d++) dot += query[d] * k[b][h][s][d];
      scores.push(s <= t ? dot * scale : -Infinity);
    }
    const weights = softmaxRow(scores);
    const out = new Array(D).fill(0);
    for (let s = 0; s < T; s++) {
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
