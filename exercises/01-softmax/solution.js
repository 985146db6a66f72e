// Softmax of each row of x [R, C]. Subtracting the row's maximum first keeps
// every exponent <= 0, so nothing overflows; exp(-Infinity) = 0 masks an entry.
function softmax(x) {
  return x.map((row) => {
    const max = Math.max(...row);
    const exps = row.map((value) => Math.exp(value - max));
    const sum = exps.reduce((total, e) => total + e, 0);
    return exps.map((e) => e / sum);
  });
}
