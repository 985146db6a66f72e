// The mistake under test (softmax_wrong_axis): each column is normalised instead of each row.
// softmax over each row of x [R, C]. Subtracting the row's maximum first keeps
// exp() from overflowing; exp(-Infinity) is 0, so masked entries get no weight.
function softmax(x) {
  const R = x.length, C = x[0].length;
  const out = x.map((row) => row.slice());
  for (let c = 0; c < C; c++) {
    let max = -Infinity;
    for (let r = 0; r < R; r++) if (x[r][c] > max) max = x[r][c];
    let sum = 0;
    for (let r = 0; r < R; r++) sum += Math.exp(x[r][c] - max);
    for (let r = 0; r < R; r++) out[r][c] = Math.exp(x[r][c] - max) / sum;
  }
  return out;
}
