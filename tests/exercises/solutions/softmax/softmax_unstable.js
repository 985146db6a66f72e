// The mistake under test (softmax_unstable): exp() of the raw values, no maximum subtracted.
// softmax over each row of x [R, C]. Subtracting the row's maximum first keeps
// exp() from overflowing; exp(-Infinity) is 0, so masked entries get no weight.
function softmax(x) {
  const out = [];
  for (const row of x) {
    const exps = row.map((value) => Math.exp(value));
    let sum = 0;
    for (const e of exps) sum += e;
    out.push(exps.map((e) => e / sum));
  }
  return out;
}
