// What attention costs, measured: eager attention (the score matrix held in memory)
// against flash attention (tiles and an online softmax, no score matrix) by prefill
// length T, and decode time per token by cache length S, on one of two engines:
//   the GPU   the WebGPU kernels v0 eager, v1 flash and v2 decode, on a GPU that passed
//             its checks. Before anything runs the figure works out, from the adapter's
//             limits (attention-gpu.ts's shapeProblem), the largest T whose score matrix
//             fits, and says it. Each point is checked against the core on a sample of
//             rows (checkKernelSample) before it is timed; times are medians of three
//             runs, from submitting the work to the device's saying it is done.
//   the CPU   without a GPU, when the reader asks: the core's own CPU kernels in
//             WebAssembly, one thread, in a worker (cpu-bench-worker.ts): v0 reference
//             (the score matrices held) against v3 streaming (FlashAttention's tiling on
//             a CPU), and v3 for decode, each checked against the fp64 reference on
//             sampled rows and then timed by the core's benchmark (core/bench).
// A point that fails its check stops its kernel's line.
//
// Shape: B 1, 8 query heads sharing 2 KV heads, head size 64, causal, f32.
// URL state: gpu-cost.T (the largest prefill length), gpu-cost.S (the longest cache).
// The host gets data-engine (gpu or cpu), data-points (JSON: {prefill: [{T, role, ms,
// bytes, error}], decode: [{S, ms, bytes, error}]}, role eager or flash), data-eager-limit
// (the largest T eager fits, or 0) and data-done.
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
const firstT = 256;

type Role = 'eager' | 'flash';
/** A measured point: error 0 when its check passed, else the check's error (Infinity when not finite). */
interface Measured { ms: number; bytes: number; error: number }
interface PrefillPoint extends Measured { T: number; role: Role }
interface DecodePoint extends Measured { S: number }

/** What the figure measures on: the GPU's kernels or the core's CPU kernels. */
interface Engine {
  kind: 'gpu' | 'cpu';
  /** The kernels' names: eager, flash, decode. */
  names: Record<Role | 'decode', string>;
  /** "Timed on ...": where, what and how. */
  where: string;
  software: boolean;
  defaults: { T: number; S: number };
  /** The shortest cache timed: a decode step shorter than the engine's clock can see is left out. */
  firstS: number;
  /** The largest of the doublings from 256 at which eager runs, and why the next does not (null: every one). */
  eagerLimit(): { T: number; why: string | null };
  prefill(role: Role, T: number, say: (text: string) => void, stopped: () => boolean): Promise<Measured>;
  decode(S: number, say: (text: string) => void, stopped: () => boolean): Promise<Measured>;
}

const doublings = (from: number, to: number) => { const out: number[] = []; for (let x = from; x <= to; x *= 2) out.push(x); return out; };
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const failedError = (error: number | null) => (error !== null && Number.isFinite(error) ? Math.max(error, Number.MIN_VALUE) : Infinity);

function prefillShape(T: number): AttentionShape { return { B: 1, ...heads, T, S: T }; }
function decodeShape(S: number): AttentionShape { return { B: 1, ...heads, T: 1, S }; }

/** q, k, v and the output; `scoreArrays` arrays of [B, Hq, T, S] more. */
function heldBytes(s: AttentionShape, scoreArrays: number): number {
  return 2 * s.B * s.Hq * s.T * s.D * 4 + 2 * s.B * s.Hkv * s.S * s.D * 4 + scoreArrays * s.B * s.Hq * s.T * s.S * 4;
}

class Stopped extends Error {}

/** The WebGPU kernels on a GPU that passed its checks. */
function gpuEngine(gpu: Gpu, checks: KernelChecks): Engine {
  const versions: Record<Role | 'decode', KernelVersion> = { eager: 'v0_eager', flash: 'v1_flash', decode: 'v2_decode' };
  const point = async (version: KernelVersion, shape: AttentionShape, where: string, say: (text: string) => void, stopped: () => boolean): Promise<Measured> => {
    const figure: CaseRef = { shape, mask: { kind: 'causal', T: shape.T, S: shape.S } };
    say(`${where}: ${version}, checking against the core…`);
    const inputs = checks.kernelInputs(figure);
    const first = await runAttention(gpu, version, shape, inputs, { skipProbs: true });
    const [record] = checks.checkKernelSample(figure, version, first.out, sampledRows);
    const size = heldBytes(shape, version === 'v0_eager' ? 2 : 0);
    if (!record.passed) return { ms: first.ms, bytes: size, error: failedError(record.max_abs_error) };
    const times: number[] = [];
    for (let i = 0; i < timedRuns; i++) {
      if (stopped()) throw new Stopped();
      say(`${where}: ${version}, checked; timing run ${i + 1} of ${timedRuns}…`);
      times.push((await runAttention(gpu, version, shape, inputs, { skipProbs: true })).ms);
    }
    return { ms: median(times), bytes: size, error: 0 };
  };
  return {
    kind: 'gpu',
    names: { eager: 'v0 eager', flash: 'v1 flash', decode: 'v2 decode' },
    where: `Timed on ${describeAdapter(gpu.adapter)}: one layer's attention, 8 query heads sharing 2 KV heads, head size 64, causal, f32. Each point is checked against the core on ${sampledRows} rows before it is timed; times are medians of ${timedRuns} runs, from submitting the work to the GPU's saying it is done. Memory is what the kernel's buffers hold: q, k, v and the output, and eager's scores and probabilities.`,
    software: gpu.adapter.software,
    defaults: gpu.adapter.software ? { T: 1024, S: 4096 } : { T: 4096, S: 32768 },
    firstS: 512,
    eagerLimit: () => {
      let T = 0;
      for (let next = firstT; next <= 2 ** 20; next *= 2) {
        const problem = shapeProblem(gpu, 'v0_eager', prefillShape(next));
        if (problem) return { T, why: `Eager's score matrices fit this adapter up to T = ${groupDigits(T)}; at T = ${groupDigits(next)} ${problem.replace(/: choose a smaller shape$/, '')}. Flash writes no score matrix and goes on.` };
        T = next;
      }
      return { T, why: null };
    },
    prefill: (role, T, say, stopped) => point(versions[role], prefillShape(T), `T = ${groupDigits(T)}`, say, stopped),
    decode: (S, say, stopped) => point('v2_decode', decodeShape(S), `S = ${groupDigits(S)}`, say, stopped),
  };
}

interface BenchRow { case: string; kernel: string; T: number; S: number; ms?: number; skipped?: string; validation?: { passed: boolean; max_error: number | null } }

/** The core's CPU kernels in WebAssembly, one thread, in a worker. */
function cpuEngine(): Engine {
  const worker = new Worker(new URL('./cpu-bench-worker.ts', import.meta.url), { type: 'module', name: 'attention cost on the CPU' });
  let next = 0;
  const waiting = new Map<number, { resolve: (rows: BenchRow[]) => void; reject: (error: Error) => void }>();
  worker.onmessage = (event: MessageEvent<{ id: number; report?: { rows: BenchRow[] }; error?: string }>) => {
    const found = waiting.get(event.data.id);
    waiting.delete(event.data.id);
    if (event.data.report) found?.resolve(event.data.report.rows);
    else found?.reject(new Error(event.data.error ?? 'the benchmark gave no report'));
  };
  worker.onerror = () => {
    for (const w of waiting.values()) w.reject(new Error('the benchmark\'s worker stopped'));
    waiting.clear();
  };
  const bench = (options: object) => new Promise<BenchRow[]>((resolve, reject) => {
    next += 1;
    waiting.set(next, { resolve, reject });
    worker.postMessage({ id: next, options: { heads: heads.Hq, kv_heads: heads.Hkv, head_dim: heads.D, model: false, warmup: 1, min_runs: timedRuns, max_runs: timedRuns, ...options } });
  });
  const kernels: Record<Role | 'decode', string> = { eager: 'reference', flash: 'streaming', decode: 'streaming' };
  // The reference holds its scores, probabilities and the weighted step's copy: 3 arrays of [B, Hq, T, S].
  const measured = (rows: BenchRow[], wanted: string, shape: AttentionShape, scoreArrays: number): Measured => {
    const row = rows.find((r) => r.kernel === wanted && r.case === (shape.T === 1 ? 'decode' : 'prefill'));
    if (!row || row.ms === undefined || !row.validation) throw new Error(row?.skipped ?? `the benchmark has no ${wanted} row`);
    return { ms: row.ms, bytes: heldBytes(shape, scoreArrays), error: row.validation.passed ? 0 : failedError(row.validation.max_error) };
  };
  const largestReference = 1024;
  return {
    kind: 'cpu',
    names: { eager: 'v0 reference (CPU)', flash: 'v3 streaming (CPU)', decode: 'v3 streaming (CPU)' },
    where: 'No GPU here, so timed on your CPU: the core\'s own kernels in WebAssembly, one thread (a worker), 8 query heads sharing 2 KV heads, head size 64, causal, f32: v0 reference, which holds the score matrices, against v3 streaming, FlashAttention\'s tiling on a CPU. Each kernel is checked against the core\'s fp64 reference on sampled rows before it is timed; times are medians of 3 runs. Memory is what each kernel holds: q, k, v and the output, and the reference\'s 3 arrays of scores.',
    software: false,
    defaults: { T: 1024, S: 32768 },
    // A worker's clock ticks in 0.1 ms here; a decode step over 512 keys takes less.
    firstS: 4096,
    eagerLimit: () => ({ T: largestReference, why: `The reference runs up to T = ${groupDigits(largestReference)} here (the core's benchmark stops it there: at about 1 GFLOP/s it would take minutes beyond); streaming goes on.` }),
    prefill: async (role, T, say) => {
      say(`T = ${groupDigits(T)}: ${kernels[role]}, checking against the core, then timing…`);
      return measured(await bench({ prefill_T: [T], decode_S: [], kernels: [kernels[role]], reference_max_T: largestReference }), kernels[role], prefillShape(T), role === 'eager' ? 3 : 0);
    },
    decode: async (S, say) => {
      say(`S = ${groupDigits(S)}: streaming decode, checking against the core, then timing…`);
      return measured(await bench({ prefill_T: [], decode_S: [S], kernels: ['streaming'], recompute: false }), 'streaming', decodeShape(S), 0);
    },
  };
}

/** Builds the figure on the GPU that passed its checks, or on the CPU (shared/gpu-gate.ts decides). */
export async function mountGpuCost(root: HTMLElement, context: { state: UrlState }, onGpu: boolean): Promise<void> {
  const verdict = await gpuSession().verdict;
  new GpuCostFigure(root, context.state, onGpu && verdict.kind === 'passed' ? gpuEngine(verdict.gpu, verdict.checks) : cpuEngine());
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

  constructor(root: HTMLElement, private readonly state: UrlState, private readonly engine: Engine) {
    this.host = root.closest<HTMLElement>('[data-widget]') ?? root;
    this.host.dataset.engine = engine.kind;
    const savedT = Number(state.get('T')), savedS = Number(state.get('S'));
    this.largestT = select(lengths.map((T) => [String(T), groupDigits(T)]), String(lengths.includes(savedT) ? savedT : engine.defaults.T));
    this.longestS = select(caches.map((S) => [String(S), groupDigits(S)]), String(caches.includes(savedS) ? savedS : engine.defaults.S));
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
      el('p', { class: 'gpu-cost-where', 'data-testid': 'gpu-cost-adapter' }, engine.where),
      el('div', { class: 'controls' }, labelled('Largest T (prefill)', this.largestT), labelled('Longest cache S (decode)', this.longestS), this.runButton, this.stopButton),
      this.status,
      this.limitNote,
      this.finding,
      el('h3', { class: 'lesson-subtitle' }, 'Prefill: time by T'),
      this.timeChart.root,
      el('h3', { class: 'lesson-subtitle' }, 'Prefill: memory by T'),
      this.memoryChart.root,
      table('Prefill times and memory as a table', ['T', 'eager ms', 'flash ms', 'eager ÷ flash', 'eager memory', 'flash memory'], this.prefillBody, 'gpu-cost-prefill-table'),
      el('h3', { class: 'lesson-subtitle' }, 'Decode: time per token by cache length'),
      this.decodeChart.root,
      table('Decode times as a table', ['S', 'ms per token', 'K and V read'], this.decodeBody, 'gpu-cost-decode-table'),
    );
    void this.measure();
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
    const limit = this.engine.eagerLimit();
    this.host.dataset.eagerLimit = String(limit.T);
    this.limitNote.textContent = limit.why ?? 'Eager\'s score matrices fit at every length offered.';
    const say = (text: string) => setStatus(this.status, text);
    const stopped = () => this.stopped;
    try {
      for (const T of doublings(firstT, maxT)) {
        for (const role of ['eager', 'flash'] as const) {
          if (this.stopped) throw new Stopped();
          if (role === 'eager' && T > limit.T) continue;
          if (this.prefill.some((p) => p.role === role && p.error !== 0)) continue;  // a failed check stops the line
          this.prefill.push({ T, role, ...await this.engine.prefill(role, T, say, stopped) });
          this.draw();
        }
      }
      for (const S of doublings(this.engine.firstS, maxS)) {
        if (this.stopped) throw new Stopped();
        if (this.decode.some((p) => p.error !== 0)) break;
        this.decode.push({ S, ...await this.engine.decode(S, say, stopped) });
        this.draw();
      }
      const failed = [...this.prefill, ...this.decode].some((p) => p.error !== 0);
      setStatus(this.status, failed
        ? 'A point FAILED its check against the core: its kernel\'s line stops there.'
        : `Measured ${this.prefill.length + this.decode.length} points; every one passed its check against the core.`, failed ? 'error' : 'info');
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

  private draw(): void {
    const { names } = this.engine;
    this.host.dataset.points = JSON.stringify({ prefill: this.prefill, decode: this.decode });
    const line = (role: Role, pick: (p: PrefillPoint) => number, className: string): Series =>
      ({ name: names[role], className, id: role, points: this.prefill.filter((p) => p.role === role && p.error === 0 && pick(p) > 0).map((p) => [p.T, pick(p)]) });
    const Ts = [...new Set(this.prefill.map((p) => p.T))];
    if (Ts.length > 0) {
      const xDomain: [number, number] = [firstT, Math.max(firstT * 2, Ts[Ts.length - 1])];
      const eager = this.prefill.find((p) => p.role === 'eager' && p.error === 0 && p.ms > 0);
      const reference: Series[] = eager
        ? [{ name: '∝ T²', className: 'series-t-squared', id: 't-squared', points: Ts.map((T) => [T, eager.ms * (T / eager.T) ** 2]) }]
        : [];
      this.timeChart.setData(logLog({
        label: `Measured time of ${names.eager} and ${names.flash} by T`,
        xLabel: 'T (queries = keys)', yLabel: 'milliseconds', xDomain,
        series: [line('eager', (p) => p.ms, 'series-eager'), line('flash', (p) => p.ms, 'series-flash'), ...reference].filter((s) => s.points.length > 0),
        markers: [], dots: [],
      }));
      const formula: Series = { name: 'n_h T² × 4 bytes, one matrix', className: 'series-t-squared', id: 'formula', points: Ts.map((T) => [T, heads.Hq * T * T * 4]) };
      this.memoryChart.setData(logLog({
        label: 'Memory of eager and flash attention by T, against one score matrix\'s formula',
        xLabel: 'T (queries = keys)', yLabel: 'bytes', xDomain,
        series: [line('eager', (p) => p.bytes, 'series-eager'), line('flash', (p) => p.bytes, 'series-flash'), formula].filter((s) => s.points.length > 0),
        markers: [], dots: [],
      }));
      // The largest T both kernels ran, in words.
      const both = Ts.filter((T) => (['eager', 'flash'] as const).every((r) => this.prefill.some((p) => p.T === T && p.role === r && p.error === 0))).at(-1);
      const e = this.prefill.find((p) => p.T === both && p.role === 'eager');
      const f = this.prefill.find((p) => p.T === both && p.role === 'flash');
      this.finding.textContent = e && f
        ? `At T = ${groupDigits(e.T)}, ${names.eager} took ${e.ms.toFixed(1)} ms and ${names.flash} ${f.ms.toFixed(1)} ms (${(e.ms / f.ms).toFixed(1)} times as long), holding ${bytes(e.bytes)} against ${bytes(f.bytes)}.` +
          (this.engine.software ? ' On this software adapter the times are a CPU\'s.' : '')
        : '';
      this.prefillBody.replaceChildren(...Ts.map((T) => {
        const pe = this.prefill.find((p) => p.T === T && p.role === 'eager');
        const pf = this.prefill.find((p) => p.T === T && p.role === 'flash');
        const ms = (p?: PrefillPoint) => (!p ? '–' : p.error === 0 ? p.ms.toFixed(2) : 'FAILED');
        return el('tr', {}, el('td', {}, groupDigits(T)), el('td', { class: 'num' }, ms(pe)), el('td', { class: 'num' }, ms(pf)),
          el('td', { class: 'num' }, pe && pf && pe.error === 0 && pf.error === 0 ? `${(pe.ms / pf.ms).toFixed(2)}×` : '–'),
          el('td', { class: 'num' }, pe ? bytes(pe.bytes) : 'not run'), el('td', { class: 'num' }, pf ? bytes(pf.bytes) : '–'));
      }));
    }
    const good = this.decode.filter((p) => p.error === 0 && p.ms > 0);  // a log axis has no 0
    if (good.length > 0) {
      const first = good[0];
      this.decodeChart.setData(logLog({
        label: `Measured decode time per token by cache length, ${names.decode}`,
        xLabel: 'S (cached keys)', yLabel: 'milliseconds', xDomain: [this.engine.firstS, Math.max(this.engine.firstS * 2, this.decode[this.decode.length - 1].S)],
        series: [
          { name: names.decode, className: 'series-decode', id: 'decode', points: good.map((p) => [p.S, p.ms]) },
          { name: '∝ S', className: 'series-t-squared', id: 'linear', points: good.map((p) => [p.S, first.ms * (p.S / first.S)]) },
        ],
        markers: [], dots: [],
      }));
    }
    this.decodeBody.replaceChildren(...this.decode.map((p) => el('tr', {}, el('td', {}, groupDigits(p.S)),
      el('td', { class: 'num' }, p.error === 0 ? p.ms.toFixed(3) : 'FAILED'), el('td', { class: 'num' }, bytes(2 * heads.Hkv * p.S * heads.D * 4)))));
  }
}
