// Softmax of each row of x [R, C] with the sink as one more column that has no value.
// The maximum covers the keys and the sink, so nothing overflows and a row of
// -Infinity keys gives all zeros (the sink takes it all).
function softmaxWithSink(x, sink) {
  return x.map((row) => {
    const max = Math.max(sink, ...row);
    const exps = row.map((value) => Math.exp(value - max));
    const sum = exps.reduce((total, e) => total + e, Math.exp(sink - max));
    return exps.map((e) => e / sum);
  });
}
