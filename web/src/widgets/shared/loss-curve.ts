// A loss curve on the shared line chart (line-chart.ts): loss per character against
// training steps, both axes linear, for live training and the Shakespeare model.
// The training loss is one number per step and noisy (each step sees another
// batch), so it is drawn as the mean over equal runs of steps (loss-bins.ts), at most 240 of
// them; the held-out loss is measured now and then on fixed windows and drawn as
// points joined by a line. A dashed rule marks ln V, the loss of guessing evenly
// among the V characters a model can be asked to predict: about where every run starts.
// The x axis runs to the run's last step, with ticks at round numbers inside it.
import { formatNumber } from '../../lib/dom';
import { count, groupDigits } from '../../lib/words';
import { LineChart, type ChartSpec } from './line-chart';
import { binnedLosses, roundTicks } from './loss-bins';

export interface LossData {
  losses: ArrayLike<number>;         // the training loss of every step so far, step i + 1 at [i]
  heldout: [number, number][];       // (steps done, held-out loss)
  characters: number | null;         // V, the characters to guess among (BOS is never a target), once known
  steps?: number;                    // the run's length, when known: the x axis ends there
}

/** The loss of guessing evenly among `characters`: ln V, nats per character. */
export function uniformLoss(characters: number): number {
  return Math.log(characters);
}

/** ln V as the page writes it everywhere: three decimals. */
export function uniformLossText(characters: number): string {
  return formatNumber(uniformLoss(characters), 3);
}

export class LossCurve {
  private readonly chart = new LineChart({
    height: (width) => Math.round(Math.max(200, Math.min(300, width * 0.45))),
    margin: { left: 44, right: 14, top: 16, bottom: 38 },
    legendBelow: 0,
  });
  readonly root = this.chart.root;

  constructor(testId: string) {
    this.root.dataset.testid = testId;
  }

  setData(data: LossData): void {
    const { losses, heldout } = data;
    const train = binnedLosses(losses);
    // For tests and screen readers: what is drawn, in numbers.
    const root = this.root;
    root.dataset.trainSteps = String(losses.length);
    root.dataset.heldoutPoints = String(heldout.length);
    root.dataset.firstTrain = losses.length ? String(losses[0]) : '';
    root.dataset.lastTrain = train.length ? String(train[train.length - 1][1]) : '';
    this.chart.setData(lossSpec(data, train));
  }
}

function lossSpec(data: LossData, train: [number, number][]): ChartSpec {
  const { losses, heldout, characters } = data;
  const baseline = characters === null ? null : uniformLoss(characters);
  const steps = Math.max(data.steps ?? 100, losses.length, ...heldout.map(([s]) => s));
  const values = [...train.map(([, y]) => y), ...heldout.map(([, y]) => y), ...(baseline === null ? [] : [baseline])];
  const lo = values.length ? Math.max(0, Math.floor(Math.min(...values) * 2) / 2) : 1;
  const hi = values.length ? Math.ceil(Math.max(...values) * 2) / 2 : 5;
  const top = Math.max(hi, lo + 0.5);
  const yStep = top - lo > 3 ? 1 : 0.5;
  return {
    label: describe(data, train),
    x: {
      title: 'training steps', domain: [0, steps],
      ticks: (pixels) => roundTicks(steps, pixels < 422 ? 2 : 5).map((at) => ({ at, label: groupDigits(at) })),  // 2 under 480 px wide
    },
    y: {
      title: 'nats per character', domain: [lo, top],
      ticks: () => Array.from({ length: Math.floor((top - lo) / yStep + 1e-9) + 1 }, (_, i) => ({ at: lo + i * yStep, label: (lo + i * yStep).toFixed(1) })),
    },
    series: [
      { name: 'train', points: train, className: 'series-train', id: 'train' },
      { name: 'held-out', points: heldout, className: 'series-heldout', id: 'heldout' },
    ],
    rules: characters === null ? [] : [{ y: uniformLoss(characters), label: `guessing evenly: ln ${characters} = ${uniformLossText(characters)}` }],
    // Marks on the measurements while they are few enough to tell apart; then the line alone.
    dots: heldout.length <= 80 ? heldout.map(([x, y]) => ({ x, y, r: 2.5, className: 'heldout-dot' })) : [],
  };
}

function describe(data: LossData, train: [number, number][]): string {
  const { losses, heldout, characters } = data;
  if (!losses.length && !heldout.length) return 'Loss per character against training steps: no steps yet.';
  const parts = [`Loss per character against training steps, ${count(losses.length, 'step')} so far.`];
  if (train.length) parts.push(`Training loss ${formatNumber(losses[0], 2)} at step 1, ${formatNumber(train[train.length - 1][1], 2)} lately.`);
  if (heldout.length) parts.push(`Held-out loss ${formatNumber(heldout[0][1], 2)} at step ${groupDigits(heldout[0][0])}, ${formatNumber(heldout[heldout.length - 1][1], 2)} at step ${groupDigits(heldout[heldout.length - 1][0])}.`);
  if (characters !== null) parts.push(`Guessing evenly among the ${characters} characters costs ${uniformLossText(characters)}.`);
  return parts.join(' ');
}
