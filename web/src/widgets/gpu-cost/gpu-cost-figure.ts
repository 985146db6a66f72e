// What attention costs, measured on the reader's GPU: eager (v0, the score matrix in GPU
// memory) against flash (v1, tiles and an online softmax, no score matrix) by prefill
// length T, and decode (v2) time per token by cache length S. Before anything runs the
// figure works out, from the adapter's limits (attention-gpu.ts's shapeProblem), the
// largest T whose score matrix fits, and says it. Every point is checked against the
// core on a sample of rows (checkKernelSample) before it is timed; a point that fails
// stops its kernel's line. Times are medians of three runs, from submitting the work to
// the device's saying it is done, the output's copy back included.
//
// Shape: B 1, 8 query heads sharing 2 KV heads, head size 64, causal, f32.
// URL state: gpu-cost.T (the largest prefill length), gpu-cost.S (the longest cache).
// The host gets data-points (JSON: {prefill: [{T, version, ms, bytes, error}], decode:
// [{S, ms, bytes, error}]}), data-eager-limit (the largest T eager fits, or 0) and data-done.
import './gpu-cost.css';
import { el, labelled, select, setStatus } from '../../lib/dom';
import type { CaseRef, KernelChecks } from '../../lib/kernel-checks-core';
import type { UrlState } from '../../lib/url-state';
import { groupDigits } from '../../lib/words';
import { type AttentionShape, type KernelVersion, runAttention, shapeProblem } from '../../gpu/attention-gpu';
import { describeAdapter, type Gpu } from '../../gpu/gpu-device';
import { gpuSession } from '../../gpu/gpu-session';
import { bytes } from '../shared/lesson-kit';
import { logLog, newLogLogChart } from '../shared/log-log-chart';
import type { Series } from '../shared/line-chart';

const heads = { Hq: 8, Hkv: 2, D: 64 };
const timedRuns = 3;
const sampledRows = 16;
const lengths = [512, 1024, 2048, 4096, 8192, 16384];
const caches = [2048, 4096, 8192, 16384, 32768, 65536];
const firstT = 256, firstS = 512;

interface PrefillPoint { T: number; version: KernelVersion; ms: number; bytes: number; error: number }
interface DecodePoint { S: number; ms: number; bytes: number; error: number }

const names: Record<KernelVersion, string> = { v0_eager: 'v0 eager', v1_flash: 'v1 flash', v2_decode: 'v2 decode' };
const doublings = (from: number, to: number) => { const out: number[] = []; for (let x = from; x <= to; x *= 2) out.push(x); return out; };
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function prefillShape(T: number): AttentionShape { return { B: 1, ...heads, T, S: T }; }
function decodeShape(S: number): AttentionShape { return { B: 1, ...heads, T: 1, S }; }

/** What a version's buffers hold on the device: q, k, v and out, and eager's scores and probabilities. */
function deviceBytes(version: KernelVersion, s: AttentionShape): number {
  const qo = 2 * s.B * s.Hq * s.T * s.D * 4, kv = 2 * s.B * s.Hkv * s.S * s.D * 4;
  return qo + kv + (version === 'v0_eager' ? 2 * s.B * s.Hq * s.T * s.S * 4 : 0);
}

/** Builds the figure on the GPU that passed its checks (shared/gpu-gate.ts builds it only then). */
export async function mountGpuCost(root: HTMLElement, context: { state: UrlState }): Promise<void> {
  const verdict = await gpuSession().verdict;
  if (verdict.kind === 'passed') new GpuCostFigure(root, context.state, verdict.gpu, verdict.checks);
}

export class GpuCostFigure {
  private readonly host: HTMLElement;
  private readonly largestT: HTMLSelectElement;
  private readonly longestS: HTMLSelectElement;
  private readonly runButton = el('button', { type: 'button', 'data-testid': 'gpu-cost-run' }, 'Measure again');
  private readonly stopButton = el('button', { type: 'button', 'data-testid': 'gpu-cost-stop', disabled: true }, 'Stop');
  private readonly status = el('p', { class: 'status', role: 'status', 'data-testid': 'gpu-cost-progress' });
  private readonly limitNote = el('p', { class: 'finding', 'data-testid': 'gpu-cost-limit' });
  private readonly finding = el('p', { class: 'finding', 'data-testid': 'gpu-cost-finding' });
  private readonly timeChart = newLogLogChart();
  private readonly memoryChart = newLogLogChart();
  private readonly decodeChart = newLogLogChart();
  private readonly prefillBody = el('tbody');
  private readonly decodeBody = el('tbody');
  private prefill: PrefillPoint[] = [];
  private decode: DecodePoint[] = [];
  private stopped = false;
  private running = false;

  constructor(root: HTMLElement, private readonly state: UrlState, private readonly gpu: Gpu, private readonly checks: KernelChecks) {
    this.host = root.closest<HTMLElement>('[data-widget]') ?? root;
    const software = gpu.adapter.software;
    const savedT = Number(state.get('T')), savedS = Number(state.get('S'));
    this.largestT = select(lengths.map((T) => [String(T), groupDigits(T)]), String(lengths.includes(savedT) ? savedT : software ? 1024 : 4096));
    this.longestS = select(caches.map((S) => [String(S), groupDigits(S)]), String(caches.includes(savedS) ? savedS : software ? 4096 : 32768));
    this.largestT.dataset.testid = 'gpu-cost-T';
    this.longestS.dataset.testid = 'gpu-cost-S';
    for (const control of [this.largestT, this.longestS]) control.addEventListener('change', () => {
      this.state.set({ T: this.largestT.value, S: this.longestS.value });
      void this.measure();
    });
    this.runButton.addEventListener('click', () => void this.measure());
    this.stopButton.addEventListener('click', () => { this.stopped = true; });
    this.timeChart.root.dataset.testid = 'gpu-cost-time-chart';
    this.memoryChart.root.dataset.testid = 'gpu-cost-memory-chart';
    this.decodeChart.root.dataset.testid = 'gpu-cost-decode-chart';
    const table = (label: string, head: string[], body: HTMLElement, testid: string) =>
      el('details', { class: 'chart-table' }, el('summary', {}, 'The chart as a table'),
        el('div', { class: 'scroll-x', tabindex: 0, role: 'region', 'aria-label': label },
          el('table', { class: 'data', 'data-testid': testid }, el('thead', {}, el('tr', {}, ...head.map((h) => el('th', { scope: 'col' }, h)))), body)));
    root.append(
      el('p', { class: 'gpu-cost-where', 'data-testid': 'gpu-cost-adapter' },
        `Timed on ${describeAdapter(gpu.adapter)}: one layer's attention, 8 query heads sharing 2 KV heads, head size 64, causal, f32. Each point is checked against the core on ${sampledRows} rows before it is timed; times are medians of ${timedRuns} runs, from submitting the work to the GPU's saying it is done.`),
      el('div', { class: 'controls' }, labelled('Largest T (prefill)', this.largestT), labelled('Longest cache S (decode)', this.longestS), this.runButton, this.stopButton),
      this.status,
      this.limitNote,
      this.finding,
      el('h3', { class: 'lesson-subtitle' }, 'Prefill: time by T'),
      this.timeChart.root,
      el('h3', { class: 'lesson-subtitle' }, 'Prefill: GPU memory by T'),
      this.memoryChart.root,
      table('Prefill times and memory as a table', ['T', 'eager ms', 'flash ms', 'eager ÷ flash', 'eager memory', 'flash memory'], this.prefillBody, 'gpu-cost-prefill-table'),
      el('h3', { class: 'lesson-subtitle' }, 'Decode: time per token by cache length'),
      this.decodeChart.root,
      table('Decode times as a table', ['S', 'ms per token', 'K and V read'], this.decodeBody, 'gpu-cost-decode-table'),
    );
    void this.measure();
  }

  /** The largest T of the doublings from 256 whose eager score matrix fits this adapter, and why the next does not. */
  private eagerLimit(): { T: number; why: string | null } {
    let T = 0;
    for (let next = firstT; next <= 2 ** 20; next *= 2) {
      const problem = shapeProblem(this.gpu, 'v0_eager', prefillShape(next));
      if (problem) return { T, why: `at T = ${groupDigits(next)} ${problem}` };
      T = next;
    }
    return { T, why: null };
  }

  private async measure(): Promise<void> {
    if (this.running) { this.stopped = true; while (this.running) await new Promise((r) => setTimeout(r, 50)); }
    this.running = true;
    this.stopped = false;
    this.prefill = [];
    this.decode = [];
    delete this.host.dataset.done;
    this.stopButton.disabled = false;
    this.runButton.disabled = true;
    const maxT = Number(this.largestT.value), maxS = Number(this.longestS.value);
    const limit = this.eagerLimit();
    this.host.dataset.eagerLimit = String(limit.T);
    this.limitNote.textContent = limit.why === null
      ? 'Eager\'s score matrix fits this adapter at every length offered.'
      : `Eager's score matrices fit this adapter up to T = ${groupDigits(limit.T)}; ${limit.why.replace(/: choose a smaller shape$/, '')}. Flash writes no score matrix and goes on.`;
    try {
      for (const T of doublings(firstT, maxT)) {
        for (const version of ['v0_eager', 'v1_flash'] as const) {
          if (this.stopped) throw new Stopped();
          if (version === 'v0_eager' && T > limit.T) continue;
          if (this.prefill.some((p) => p.version === version && !(p.error <= 0))) continue;  // a failed check stops the line
          const point = await this.point(version, prefillShape(T), `T = ${groupDigits(T)}`);
          this.prefill.push({ T, version, ...point });
          this.draw();
        }
      }
      for (const S of doublings(firstS, maxS)) {
        if (this.stopped) throw new Stopped();
        if (this.decode.some((p) => !(p.error <= 0))) break;
        const point = await this.point('v2_decode', decodeShape(S), `S = ${groupDigits(S)}`);
        this.decode.push({ S, ...point });
        this.draw();
      }
      setStatus(this.status, `Measured ${this.prefill.length + this.decode.length} points; every one passed its check against the core.`);
      if (this.prefill.some((p) => p.error > 0) || this.decode.some((p) => p.error > 0))
        setStatus(this.status, 'A point FAILED its check against the core: its kernel\'s line stops there.', 'error');
      this.host.dataset.done = 'true';
    } catch (error) {
      if (error instanceof Stopped) setStatus(this.status, `Stopped after ${this.prefill.length + this.decode.length} points.`);
      else setStatus(this.status, `The measurement stopped: ${error instanceof Error ? error.message : String(error)}`, 'error');
      this.host.dataset.done = 'stopped';
    } finally {
      this.running = false;
      this.stopButton.disabled = true;
      this.runButton.disabled = false;
    }
  }

  /** One point: run once and check a sample against the core; if it passes, time it. error: 0 passed, else the failed check's error (Infinity when not finite). */
  private async point(version: KernelVersion, shape: AttentionShape, where: string): Promise<{ ms: number; bytes: number; error: number }> {
    const figure: CaseRef = { shape, mask: { kind: 'causal', T: shape.T, S: shape.S } };
    setStatus(this.status, `${where}: ${names[version]}, checking against the core…`);
    const inputs = this.checks.kernelInputs(figure);
    const first = await runAttention(this.gpu, version, shape, inputs, { skipProbs: true });
    const [record] = this.checks.checkKernelSample(figure, version, first.out, sampledRows);
    const worst = record.max_abs_error ?? Infinity;
    const size = deviceBytes(version, shape);
    if (!record.passed) return { ms: first.ms, bytes: size, error: Number.isFinite(worst) ? Math.max(worst, Number.MIN_VALUE) : Infinity };
    const times: number[] = [];
    for (let i = 0; i < timedRuns; i++) {
      if (this.stopped) throw new Stopped();
      setStatus(this.status, `${where}: ${names[version]}, checked; timing run ${i + 1} of ${timedRuns}…`);
      times.push((await runAttention(this.gpu, version, shape, inputs, { skipProbs: true })).ms);
    }
    return { ms: median(times), bytes: size, error: 0 };
  }

  private draw(): void {
    this.host.dataset.points = JSON.stringify({ prefill: this.prefill, decode: this.decode });
    const line = (version: KernelVersion, pick: (p: PrefillPoint) => number, className: string): Series =>
      ({ name: names[version], className, id: version, points: this.prefill.filter((p) => p.version === version && p.error === 0).map((p) => [p.T, pick(p)]) });
    const Ts = [...new Set(this.prefill.map((p) => p.T))];
    if (Ts.length > 0) {
      const xDomain: [number, number] = [firstT, Math.max(firstT * 2, Ts[Ts.length - 1])];
      const eager = this.prefill.find((p) => p.version === 'v0_eager' && p.error === 0);
      const reference: Series[] = eager
        ? [{ name: '∝ T²', className: 'series-t-squared', id: 't-squared', points: Ts.map((T) => [T, eager.ms * (T / eager.T) ** 2]) }]
        : [];
      const timeSeries = [line('v0_eager', (p) => p.ms, 'series-eager'), line('v1_flash', (p) => p.ms, 'series-flash'), ...reference].filter((s) => s.points.length > 0);
      this.timeChart.setData(logLog({
        label: `Measured time of eager and flash attention by T on ${this.gpu.adapter.vendor} ${this.gpu.adapter.architecture}`,
        xLabel: 'T (queries = keys)', yLabel: 'milliseconds', xDomain, series: timeSeries, markers: [], dots: [],
      }));
      const formula: Series = { name: '2 n_h T² × 4 bytes', className: 'series-t-squared', id: 'formula', points: Ts.map((T) => [T, 2 * heads.Hq * T * T * 4]) };
      this.memoryChart.setData(logLog({
        label: 'GPU memory of eager and flash attention by T, against the score matrices\' formula',
        xLabel: 'T (queries = keys)', yLabel: 'bytes', xDomain,
        series: [line('v0_eager', (p) => p.bytes, 'series-eager'), line('v1_flash', (p) => p.bytes, 'series-flash'), formula].filter((s) => s.points.length > 0),
        markers: [], dots: [],
      }));
      // The largest T both kernels ran, in words.
      const both = Ts.filter((T) => ['v0_eager', 'v1_flash'].every((v) => this.prefill.some((p) => p.T === T && p.version === v && p.error === 0))).at(-1);
      const e = this.prefill.find((p) => p.T === both && p.version === 'v0_eager');
      const f = this.prefill.find((p) => p.T === both && p.version === 'v1_flash');
      this.finding.textContent = e && f
        ? `At T = ${groupDigits(e.T)}, eager took ${e.ms.toFixed(1)} ms and flash ${f.ms.toFixed(1)} ms (${(e.ms / f.ms).toFixed(1)} times as long), holding ${bytes(e.bytes)} on the GPU against flash's ${bytes(f.bytes)}.` +
          (this.gpu.adapter.software ? ' On this software adapter the times are a CPU\'s.' : '')
        : '';
      this.prefillBody.replaceChildren(...Ts.map((T) => {
        const e = this.prefill.find((p) => p.T === T && p.version === 'v0_eager');
        const f = this.prefill.find((p) => p.T === T && p.version === 'v1_flash');
        const ms = (p?: PrefillPoint) => (!p ? '–' : p.error === 0 ? p.ms.toFixed(2) : 'FAILED');
        return el('tr', {}, el('td', {}, groupDigits(T)), el('td', { class: 'num' }, ms(e)), el('td', { class: 'num' }, ms(f)),
          el('td', { class: 'num' }, e && f && e.error === 0 && f.error === 0 ? `${(e.ms / f.ms).toFixed(2)}×` : '–'),
          el('td', { class: 'num' }, e ? bytes(e.bytes) : 'does not fit'), el('td', { class: 'num' }, f ? bytes(f.bytes) : '–'));
      }));
    }
    const good = this.decode.filter((p) => p.error === 0);
    if (good.length > 0) {
      const first = good[0];
      this.decodeChart.setData(logLog({
        label: `Measured decode time per token by cache length on ${this.gpu.adapter.vendor} ${this.gpu.adapter.architecture}`,
        xLabel: 'S (cached keys)', yLabel: 'milliseconds', xDomain: [firstS, Math.max(firstS * 2, this.decode[this.decode.length - 1].S)],
        series: [
          { name: names.v2_decode, className: 'series-decode', id: 'v2_decode', points: good.map((p) => [p.S, p.ms]) },
          { name: '∝ S', className: 'series-t-squared', id: 'linear', points: good.map((p) => [p.S, first.ms * (p.S / first.S)]) },
        ],
        markers: [], dots: [],
      }));
    }
    this.decodeBody.replaceChildren(...this.decode.map((p) => el('tr', {}, el('td', {}, groupDigits(p.S)),
      el('td', { class: 'num' }, p.error === 0 ? p.ms.toFixed(3) : 'FAILED'), el('td', { class: 'num' }, bytes(2 * heads.Hkv * p.S * heads.D * 4)))));
  }
}

class Stopped extends Error {}
