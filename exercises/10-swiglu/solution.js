// SwiGLU: (silu(x @ wGate) * (x @ wUp)) @ wDown. x [B, T, d]; wGate, wUp [d, F]; wDown [F, d].
function swiglu(x, wGate, wUp, wDown) {
  const gate = matmul(x, wGate), up = matmul(x, wUp); // [B, T, F]
  const hidden = gate.map((rows, b) => rows.map((row, t) => row.map((a, f) => (a / (1 + Math.exp(-a))) * up[b][t][f])));
  return matmul(hidden, wDown);                       // [B, T, d]
}

// [B, T, in] @ [in, out] -> [B, T, out]
function matmul(x, w) {
  return x.map((rows) => rows.map((row) => w[0].map((_, j) => {
    let sum = 0;
    for (let i = 0; i < row.length; i++) sum += row[i] * w[i][j];
    return sum;
  })));
}
