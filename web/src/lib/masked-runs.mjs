// The masked cells of a [rows, cols] heatmap as runs: in each row, every stretch of
// consecutive cells the mask forbids, as [row, first column, one past the last]. The
// heatmap fills one rectangle per run with its hatching (a causal mask's triangle is one
// run a row). Plain JavaScript so that tests/web/masked-runs.test.mjs can run it under Node.

export function maskedRuns(rows, cols, allowed) {
  const runs = [];
  for (let r = 0; r < rows; r++)
    for (let c = 0; c < cols; ) {
      if (allowed(r, c)) {
        c++;
        continue;
      }
      const start = c;
      while (c < cols && !allowed(r, c)) c++;
      runs.push([r, start, c]);
    }
  return runs;
}
