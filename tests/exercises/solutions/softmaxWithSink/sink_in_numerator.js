// The sink's term lands in every weight as well as in the sum.
function softmaxWithSink(x, sink) {
  return x.map((row) => {
    const max = Math.max(sink, ...row);
    const sinkTerm = Math.exp(sink - max);
    const exps = row.map((value) => Math.exp(value - max));
    const sum = exps.reduce((total, e) => total + e, sinkTerm);
    return exps.map((e) => (e + sinkTerm) / sum);
  });
}
