// What the benchmarks in this folder report: medians, rounded.
export const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
export const round = (value, digits = 1) => Number(value.toFixed(digits));
