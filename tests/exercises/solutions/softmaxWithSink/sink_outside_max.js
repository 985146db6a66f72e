// The maximum is the keys' alone: a row of -Infinity makes it -Infinity.
function softmaxWithSink(x, sink) {
  return x.map((row) => {
    const max = Math.max(...row);
    const exps = row.map((value) => Math.exp(value - max));
    const sum = exps.reduce((total, e) => total + e, Math.exp(sink - max));
    return exps.map((e) => e / sum);
  });
}
