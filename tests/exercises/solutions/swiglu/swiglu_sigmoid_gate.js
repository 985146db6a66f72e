// The mistake under test (swiglu_sigmoid_gate): the gate is sigmoid(a), not a * sigmoid(a).
// SwiGLU feed-forward: (silu(x @ wGate) * (x @ wUp)) @ wDown.
// x [B, T, d]; wGate, wUp [d, F]; wDown [F, d].
function swiglu(x, wGate, wUp, wDown) {
  const gate = matmul(x, wGate);
  const up = matmul(x, wUp);
  const hidden = gate.map((rows, b) => rows.map((row, t) => row.map((a, f) => silu(a) * up[b][t][f])));
  return matmul(hidden, wDown);
}

function silu(a) {
  return 1 / (1 + Math.exp(-a));
}

// [B, T, in] @ [in, out] -> [B, T, out]
function matmul(x, w) {
  return x.map((rows) => rows.map((row) => w[0].map((_, j) => {
    let sum = 0;
    for (let i = 0; i < row.length; i++) sum += row[i] * w[i][j];
    return sum;
  })));
}
