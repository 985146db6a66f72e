// A plain softmax: the sink never enters the sum, so every row sums to 1.
function softmaxWithSink(x, sink) {
  return x.map((row) => {
    const max = Math.max(...row);
    const exps = row.map((value) => Math.exp(value - max));
    const sum = exps.reduce((total, e) => total + e, 0);
    return exps.map((e) => e / sum);
  });
}
