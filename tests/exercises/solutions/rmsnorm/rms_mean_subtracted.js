// The mistake under test (rms_mean_subtracted): the row is centred first, as in LayerNorm.
// RMSNorm over the last axis. x [B, T, d], weight [d].
function rmsnorm(x, weight, eps) {
  return x.map((rows) => rows.map((row) => {
    const mean = row.reduce((a, value) => a + value, 0) / row.length;
    const centred = row.map((value) => value - mean);
    let sumSquares = 0;
    for (const value of centred) sumSquares += value * value;
    const rms = Math.sqrt(sumSquares / row.length + eps);
    return centred.map((value, i) => (value / rms) * weight[i]);
  }));
}
