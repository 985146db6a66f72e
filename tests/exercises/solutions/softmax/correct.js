// softmax over each row of x [R, C]. Subtracting the row's maximum first keeps
// exp() from overflowing; exp(-Infinity) is 0, so masked entries get no weight.
function softmax(x) {
  const out = [];
  for (const row of x) {
    let max = -Infinity;
    for (const value of row) if (value > max) max = value;
    const exps = row.map((value) => Math.exp(value - max));
    let sum = 0;
    for (const e of exps) sum += e;
    out.push(exps.map((e) => e / sum));
  }
  return out;
}
