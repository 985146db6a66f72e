// Softmax of each row of x [R, C] with one more column, the sink, that has no value:
// weight j is exp(x[j]) / (exp(sink) + sum of exp(x)). The maximum is taken over the
// keys and the sink, so nothing overflows and a row of -Infinity gives all zeros.
function softmaxWithSink(x, sink) {
  return x.map((row) => {
    let max = sink;
    for (const value of row) if (value > max) max = value;
    const exps = row.map((value) => Math.exp(value - max));
    let sum = Math.exp(sink - max);
    for (const e of exps) sum += e;
    return exps.map((e) => e / sum);
  });
}
