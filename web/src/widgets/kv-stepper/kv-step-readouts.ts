// The KV-cache stepper's readouts: the summary of the cache after the
// latest step, and the check of its cached logits against a full recomputation
// with a log of every step so far.
import type { StepReport } from '../../lib/core';
import { el } from '../../lib/dom';
import { count, groupDigits } from '../../lib/words';

// Cached and full logits are the same float32 sums in the same order; see the text below.
export const tolerance = 1e-5;

const fmt = groupDigits;

export function argmax(row: number[]): number {
  let best = 0;
  for (let v = 1; v < row.length; v++) if (row[v] > row[best]) best = v;
  return best;
}

/** The core reports a difference that is not finite (a NaN or an infinity on either side) as null. */
function formatDiff(diff: number | null): string {
  if (diff === null) return 'not finite';
  return diff === 0 ? '0' : diff.toExponential(2);
}

/** A step passes when its difference is finite and within the tolerance, and the argmax agrees. */
export function stepPasses(report: Pick<StepReport, 'max_abs_diff' | 'argmax_agrees'>): boolean {
  return report.max_abs_diff !== null && report.max_abs_diff <= tolerance && report.argmax_agrees;
}

/** Position, cache rows, shape and size, the tokens so far and the greedy next token. */
export class CacheSummary {
  readonly root: HTMLElement;
  private readonly position = el('strong', { 'data-testid': 'kv-stepper-position' }, '0');
  private readonly rows = el('strong', { 'data-testid': 'kv-stepper-cache-rows' }, '0');
  private readonly shape = el('span', { 'data-testid': 'kv-stepper-cache-shape' }, '–');
  private readonly size = el('span', { 'data-testid': 'kv-stepper-cache-bytes' }, '–');
  private readonly tokens = el('span', { 'data-testid': 'kv-stepper-tokens' }, '–');
  private readonly greedy = el('strong', { 'data-testid': 'kv-stepper-greedy' }, '–');

  constructor() {
    this.root = el(
      'dl',
      { class: 'kv-summary' },
      // Three short entries, then the shape beside the longer size, then the tokens across (kv-stepper.css).
      el('div', {}, el('dt', {}, 'Position'), el('dd', {}, this.position, ' (the next token’s position)')),
      el('div', {}, el('dt', {}, 'Cache rows S'), el('dd', {}, this.rows, ' per layer and KV head')),
      el('div', {}, el('dt', {}, 'Greedy next token'), el('dd', {}, this.greedy)),
      el('div', {}, el('dt', {}, 'Cache shape [B, Hkv, S, dh]'), el('dd', {}, this.shape, ', keys and values in each layer')),
      el('div', { class: 'kv-span2' }, el('dt', {}, 'Cache size'), el('dd', {}, this.size)),
      el('div', { class: 'kv-wide' }, el('dt', {}, 'Tokens'), el('dd', {}, this.tokens)),
    );
  }

  /** `steps`: the ids decoded since the prefill. */
  show(report: StepReport, steps: number[]): void {
    const [B, Hkv, S, dh] = report.cache_shape;
    this.position.textContent = String(report.position);
    this.rows.textContent = String(S);
    this.shape.textContent = `[${B}, ${Hkv}, ${S}, ${dh}]`;
    this.size.textContent =
      `${fmt(report.cache_scalars)} scalars = ${fmt(report.payload_scalars_per_token)} per token × ${count(S, 'token')}, ` +
      `${fmt(report.cache_bytes_fp32)} bytes in fp32`;
    const promptLength = report.tokens.length - steps.length;
    this.tokens.textContent =
      `prompt ${report.tokens.slice(0, promptLength).join(', ')}` + (steps.length ? `; decoded ${steps.join(', ')}` : '');
    this.greedy.textContent = String(argmax(report.cached_logits[report.cached_logits.length - 1]));
  }

  clear(): void {
    for (const node of [this.position, this.rows]) node.textContent = '0';
    for (const node of [this.shape, this.size, this.tokens, this.greedy]) node.textContent = '–';
  }
}

/** The verdict on the latest step, and one log row per step. */
export class StepCheck {
  readonly root: HTMLElement;
  private readonly verdict = el('span', { class: 'kv-badge', 'data-testid': 'kv-stepper-verdict' }, '–');
  private readonly maxDiff = el('span', { 'data-testid': 'kv-stepper-max-diff' }, '–');
  private readonly argmaxText = el('span', { 'data-testid': 'kv-stepper-argmax' }, '–');
  private readonly logBody = el('tbody');
  private readonly logScroll: HTMLElement;

  constructor() {
    const log = el(
      'table',
      { class: 'data kv-log', 'data-testid': 'kv-stepper-log' },
      el('caption', {}, 'Every step so far'),
      el(
        'thead',
        {},
        el('tr', {}, ...['Step', 'New tokens', 'Position after', 'History', 'max |cached − full|', 'Argmax', 'Check'].map((h) => el('th', { scope: 'col' }, h))),
      ),
      this.logBody,
    );
    this.logScroll = el('div', { class: 'kv-log-scroll', tabindex: 0, role: 'region', 'aria-label': 'Step log' }, log);
    this.root = el(
      'section',
      { class: 'kv-check', 'aria-label': 'Cached against full recomputation', 'data-testid': 'kv-stepper-check' },
      el('p', { class: 'kv-check-line' }, this.verdict, ' Largest difference between the cached and the fully recomputed logits of this step: ', this.maxDiff, ` (tolerance ${tolerance.toExponential(0)}). Argmax: `, this.argmaxText, '.'),
      el(
        'p',
        { class: 'kv-caption' },
        'Why about 0: the cache holds exactly the keys and values that the full pass recomputes, and the core adds them up in a fixed order, so both paths do the same float32 arithmetic and usually agree to the last bit. ' +
          'The tolerance leaves room for a different summation order, such as a GPU kernel’s; a real bug, like a new token at the wrong position or a mask one column off, moves the logits by far more.',
      ),
      this.logScroll,
    );
  }

  /** Shows the step's verdict and appends its row; `decoded`: how many decode steps so far. */
  show(report: StepReport, decoded: number): void {
    const pass = stepPasses(report);
    this.root.hidden = false;
    this.verdict.textContent = pass ? 'PASS' : 'FAIL';
    this.verdict.className = `kv-badge ${pass ? 'pass' : 'fail'}`;
    this.maxDiff.textContent = formatDiff(report.max_abs_diff);
    const cachedBest = argmax(report.cached_logits[report.cached_logits.length - 1]);
    const fullBest = argmax(report.full_logits[report.full_logits.length - 1]);
    this.argmaxText.textContent = report.argmax_agrees
      ? `cached and full agree on every new row (last row: token ${cachedBest})`
      : `cached and full DISAGREE (last row: cached ${cachedBest}, full ${fullBest})`;
    this.logBody.append(
      el(
        'tr',
        { 'data-testid': 'kv-stepper-log-row' },
        el('td', {}, report.history === 0 ? 'prefill' : `${report.new_tokens.length > 1 ? 'append' : 'decode'} ${decoded}`),
        el('td', {}, report.new_tokens.join(', ')),
        el('td', { class: 'number' }, String(report.position)),
        el('td', { class: 'number' }, String(report.history)),
        el('td', { class: 'number' }, formatDiff(report.max_abs_diff)),
        el('td', {}, report.argmax_agrees ? 'agrees' : 'differs'),
        el('td', { class: pass ? 'pass' : 'fail' }, pass ? 'PASS' : 'FAIL'),
      ),
    );
    // The newest step is at the bottom of the log: keep it in view.
    this.logScroll.scrollTop = this.logScroll.scrollHeight;
  }

  /** Empties the log (a new prefill starts a new one). */
  clearLog(): void {
    this.logBody.replaceChildren();
  }

  /** Nothing cached, nothing to check. */
  clear(): void {
    this.clearLog();
    for (const node of [this.verdict, this.maxDiff, this.argmaxText]) node.textContent = '–';
    this.verdict.className = 'kv-badge';
    this.root.hidden = true;
  }
}
