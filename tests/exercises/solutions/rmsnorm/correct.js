// RMSNorm over the last axis. x [B, T, d], weight [d].
function rmsnorm(x, weight, eps) {
  return x.map((rows) => rows.map((row) => {
    let sumSquares = 0;
    for (const value of row) sumSquares += value * value;
    const rms = Math.sqrt(sumSquares / row.length + eps);
    return row.map((value, i) => (value / rms) * weight[i]);
  }));
}
