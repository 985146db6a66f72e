// A log-log line chart: powers of two along x, decades up y. The cost widget's FLOPs
// and bytes against length (cost/cost.ts) and the GPU's measured times and memory
// (gpu-cost/) use it.
import { LineChart, type ChartSpec, type Marker, type Series } from './line-chart';
import { powerOfTen } from './lesson-kit';


/** A chart for the log-log spec below; under 520 px its labels move into a legend under the axis. */
export function newLogLogChart(): LineChart {
  return new LineChart({
    height: (width) => Math.round(Math.max(230, Math.min(340, width * 0.55))),
    margin: { left: 50, right: 14, top: 22, bottom: 40 },
    legendBelow: 520,
  });
}

export interface LogLogSpec {
  label: string;
  xLabel: string;
  yLabel: string;
  xDomain: [number, number];
  series: Series[];             // y > 0
  markers: Marker[];
  dots: { x: number; y: number }[];
}

/** 131072 -> "128K". */
export function shortCount(x: number): string {
  if (x >= 1048576 && x % 1048576 === 0) return `${x / 1048576}M`;
  if (x >= 1024 && x % 1024 === 0) return `${x / 1024}K`;
  return String(Math.round(x));
}

/** y from the decade below the least value to the decade above the largest. */
export function logLog(spec: LogLogSpec): ChartSpec {
  const ys = spec.series.flatMap((s) => s.points.map(([, y]) => y)).filter((y) => y > 0);
  const lo = Math.floor(Math.log10(Math.min(...ys))), hi = Math.ceil(Math.log10(Math.max(...ys)));
  const [x0, x1] = spec.xDomain.map(Math.log2);
  const yEvery = hi - lo > 7 ? 2 : 1;  // every other decade when crowded
  return {
    label: spec.label,
    x: {
      title: spec.xLabel, domain: spec.xDomain, log: true,
      // Every power of two, labelled every other one on a chart under 520 px wide.
      ticks: (pixels) => Array.from({ length: Math.floor(x1) - Math.ceil(x0) + 1 }, (_, i) => {
        const at = 2 ** (Math.ceil(x0) + i);
        return i % (pixels + 64 < 520 ? 2 : 1) === 0 ? { at, label: shortCount(at) } : { at };
      }),
    },
    y: {
      title: spec.yLabel, domain: [10 ** lo, 10 ** Math.max(hi, lo + 1)], log: true,
      ticks: () => Array.from({ length: Math.floor((hi - lo) / yEvery) + 1 }, (_, i) => ({ at: 10 ** (lo + i * yEvery), label: powerOfTen(lo + i * yEvery) })),
    },
    series: spec.series,
    markers: spec.markers,
    dots: spec.dots,
  };
}
