// RMSNorm over the last axis. x [B, T, d], weight [d].
function rmsnorm(x, weight, eps) {
  return x.map((rows) => rows.map((row) => {
    const meanSquare = row.reduce((total, value) => total + value * value, 0) / row.length;
    const inverseRms = 1 / Math.sqrt(meanSquare + eps);
    return row.map((value, i) => value * inverseRms * weight[i]);
  }));
}
