// A loss per step or per position as a chart draws it: means over equal runs (a noisy
// loss has one number per step), and ticks at round numbers. The loss curve
// (loss-curve.ts) and the StreamingLLM figure's loss by position use them; a file of its
// own so that the notebook, which draws no loss curve, fetches only these.

/** At most this many points a line. */
const defaultBins = 240;

/** Ticks at multiples of a round step (1, 2 or 5 times a power of ten), at most n + 1 of them, from 0 to at most `end`. */
export function roundTicks(end: number, n: number): number[] {
  const step = niceCeil(end / n);
  return Array.from({ length: Math.floor(end / step + 1e-9) + 1 }, (_, i) => i * step);
}

/** 1, 2 or 5 times a power of ten, at least x. */
function niceCeil(x: number): number {
  const p = 10 ** Math.floor(Math.log10(Math.max(x, 1)));
  return [1, 2, 5, 10].map((m) => m * p).find((v) => v >= x) ?? 10 * p;
}

/** Means over equal runs of steps: (the run's last step, mean loss). */
export function binnedLosses(losses: ArrayLike<number>, count = defaultBins): [number, number][] {
  const n = losses.length;
  const width = Math.max(1, Math.ceil(n / count));
  const points: [number, number][] = [];
  for (let start = 0; start < n; start += width) {
    const end = Math.min(n, start + width);
    let sum = 0;
    for (let i = start; i < end; i++) sum += losses[i];
    points.push([end, sum / (end - start)]);
  }
  return points;
}
