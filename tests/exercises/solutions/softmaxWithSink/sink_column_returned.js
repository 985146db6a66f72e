// The sink's share comes back as one more column.
function softmaxWithSink(x, sink) {
  return x.map((row) => {
    const max = Math.max(sink, ...row);
    const all = [...row, sink].map((value) => Math.exp(value - max));
    const sum = all.reduce((total, e) => total + e, 0);
    return all.map((e) => e / sum);
  });
}
