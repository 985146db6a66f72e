// A colour scale read from a table of colours, two ways:
//   binned(table, lo, hi)   the table splits [lo, hi] into equal bins (d3's viridis is such a table)
//   sampled(table, lo, hi)  entry i is the scale at lo + (hi - lo) i / (n - 1): the nearest sample
// Values outside [lo, hi] take the end colours. Plain JavaScript so that
// tests/web/color-ramps.test.mjs can run it under Node.

export function binned(table, lo, hi) {
  const span = hi - lo || 1, last = table.length - 1;
  return (value) => table[Math.min(last, Math.floor(Math.min(1, Math.max(0, (value - lo) / span)) * table.length))];
}

export function sampled(table, lo, hi) {
  const span = hi - lo || 1, last = table.length - 1;
  return (value) => table[Math.round(Math.min(1, Math.max(0, (value - lo) / span)) * last)];
}
