// The KV-cache stepper: the tiny model (seed 1) prefills a prompt, then
// decodes one token at a time through the core's KV cache, or appends several at
// once (a chunk after the cached ones, as a chunked prefill runs). After every step
// the core also recomputes the whole sequence without a cache and reports the
// largest difference between the two sets of logits (wasm/bindings_session.cpp).
// Shown per step: the layer-0 key cache [S, dh] of one KV head with the new
// rows marked, the step's mask [T_new, S] with its diagonal offset
// (history = S - T_new), the step's attention for one layer and query head,
// and the check against the full pass. Below, the payload calculator.
//
// Controls (data-testid): kv-stepper-prompt, kv-stepper-prefill, kv-stepper-token, kv-stepper-step, kv-stepper-reset,
// kv-stepper-kv-head, kv-stepper-layer, kv-stepper-head. Readouts: kv-stepper-position, kv-stepper-cache-rows,
// kv-stepper-cache-shape, kv-stepper-history, kv-stepper-verdict, kv-stepper-max-diff, kv-stepper-argmax, kv-stepper-log
// (one row per step). URL (prefix kv-stepper): prompt, steps (the steps since the prefill,
// replayed on load: "7,8" two one-token steps, "4+9" one chunk of two), kvhead, layer,
// head, and the calculator's preset, dtype, context, batch.
//
// One DecodeSession lives as long as the widget; it is reset, never recreated,
// and freed (.delete()) when the widget leaves the page.
import './kv-stepper.css';
import type { DecodeSession, StepReport } from '../../lib/core';
import { el, setStatus } from '../../lib/dom';
import type { UrlState } from '../../lib/url-state';
import { count } from '../../lib/words';
import type { WidgetContext } from '../../lib/widget';
import { payloadCalculator } from './kv-payload';
import { StepFigure } from './kv-step-figure';
import { argmax, CacheSummary, StepCheck } from './kv-step-readouts';
import { defaultPrompt, parseTokens, StepControls } from './kv-step-controls';

// The session's own limit (max_session_tokens in wasm/bindings_session.cpp).
const maxTokens = 64;

/** The session, the steps so far, and the views they are drawn in. */
class Stepper {
  private report: StepReport | null = null;  // the latest step's
  private steps: number[][] = [];            // the steps since the prefill, each its ids
  readonly status = el('p', { class: 'status', 'data-testid': 'kv-stepper-status' });
  readonly controls = new StepControls(maxTokens, {
    prefill: (ids) => this.prefill(ids) && this.afterStep(),
    step: (token) => this.step(token),
    reset: () => this.reset(),
    refuse: (message) => setStatus(this.status, message, 'error'),
  });
  readonly summary = new CacheSummary();
  readonly figure = new StepFigure(() => this.save());
  readonly check = new StepCheck();

  constructor(private readonly session: DecodeSession, private readonly state: UrlState) {}

  private show(next: StepReport): void {
    this.report = next;
    this.summary.show(next, this.steps.flat());
    this.figure.show(next);
    this.check.show(next, this.steps.length);
    this.controls.setNext(argmax(next.cached_logits[next.cached_logits.length - 1]), next.position < maxTokens);
  }

  clear(): void {
    this.report = null;
    this.summary.clear();
    this.figure.show(null);
    this.check.clear();
    this.controls.setNext(null, false);
  }

  prefill(ids: number[]): boolean {
    try {
      const next = this.session.prefill(ids);
      this.steps = [];
      this.check.clearLog();
      this.show(next);
      return true;
    } catch (error) {
      setStatus(this.status, `The core refused the prompt: ${error instanceof Error ? error.message : String(error)}.`, 'error');
      return false;
    }
  }

  /** One token decoded, or several appended in one pass through the cache. */
  decode(tokens: number[]): boolean {
    if (!this.report) {
      setStatus(this.status, 'Prefill a prompt first: the cache is empty.', 'error');
      return false;
    }
    try {
      const next = tokens.length === 1 ? this.session.step(tokens[0]) : this.session.append(tokens);
      this.steps.push(tokens);
      this.show(next);
      return true;
    } catch (error) {
      setStatus(this.status, `The core refused this step: ${error instanceof Error ? error.message : String(error)}.`, 'error');
      return false;
    }
  }

  /** More tokens through the cache: the greedy choice for null. */
  private step(tokens: number[] | null): void {
    if (tokens === null && !this.report) return;
    if (!this.decode(tokens ?? [argmax(this.report!.cached_logits[this.report!.cached_logits.length - 1])])) return;
    this.controls.clearToken();
    this.afterStep();
  }

  private reset(): void {
    this.session.reset();
    this.steps = [];
    this.clear();
    setStatus(this.status, 'The cache is empty. Prefill a prompt to start again.');
    this.save();
  }

  afterStep(): void {
    const report = this.report;
    if (!report) return;
    setStatus(
      this.status,
      report.position >= maxTokens
        ? `The cache holds ${report.position} tokens, the stepper's limit. Reset or prefill to start again.`
        : report.history === 0
          ? `Prefilled ${count(report.new_tokens.length, 'token')} in one pass. Decode the next token, the greedy choice or one you type, or type several to append them as one chunk.`
          : report.new_tokens.length > 1
            ? `Appended ${report.new_tokens.length} tokens at positions ${report.history} to ${report.position - 1} in one pass through the cache: ` +
              `the mask has ${report.new_tokens.length} rows over ${report.position} keys, its diagonal shifted right by the ${count(report.history, 'cached token')} ` +
              `(row t reads keys up to t + ${report.history}).`
            : `Decoded token ${report.new_tokens[0]} at position ${report.history}.`,
    );
    this.save();
  }

  private save(): void {
    this.state.set({
      prompt: this.controls.prompt.value.trim() || null,
      steps: this.report && this.steps.length ? this.steps.map((ids) => ids.join('+')).join(',') : null,
      ...this.figure.values(),
    });
  }

  /** The link's prompt and steps, replayed, or the default prompt. */
  start(): void {
    this.clear();
    const linked = parseTokens(this.state.get('prompt') ?? defaultPrompt.join(','), maxTokens);
    if ('error' in linked) setStatus(this.status, `The link's prompt was not usable (${linked.error}) Starting from ${defaultPrompt.join(', ')}.`, 'error');
    const ids = 'ids' in linked ? linked.ids : defaultPrompt;
    this.controls.prompt.value = ids.join(',');
    if (!this.prefill(ids)) return;
    const replay = parseSteps(this.state.get('steps') ?? '', maxTokens - ids.length);
    if ('error' in replay) setStatus(this.status, `The link's decoded steps were not usable: ${replay.error}`, 'error');
    else for (const tokens of replay.steps) if (!this.decode(tokens)) break;
    this.figure.restore(this.state);
    if (this.status.dataset.kind !== 'error') this.afterStep();
  }
}

/** A link's steps, "7,8,4+9": each comma-separated step one id, or ids joined by + for a chunk. */
function parseSteps(text: string, limit: number): { steps: number[][] } | { error: string } {
  const steps: number[][] = [];
  for (const part of text.split(',').filter((part) => part.trim() !== '')) {
    const parsed = parseTokens(part.replace(/\+/g, ','), limit);
    if ('error' in parsed) return parsed;
    steps.push(parsed.ids);
  }
  if (steps.flat().length > limit) return { error: `${steps.flat().length} ids given; the stepper has room for ${limit} after the prompt.` };
  return { steps };
}

export function mountKvStepper(root: HTMLElement, context: WidgetContext): void {
  const { core, state } = context;
  const session = core.decodeSession({ seed: 1 });
  root.dataset.session = 'live';  // 'deleted' once freed (the tests read it)
  const stepper = new Stepper(session, state);
  root.append(
    stepper.controls.root,
    stepper.status,
    stepper.summary.root,
    stepper.figure.root,
    stepper.check.root,
    payloadCalculator(core, state),
  );

  // Free the session when the widget leaves the page (embind objects are not garbage-collected).
  const watcher = new MutationObserver(() => {
    if (root.isConnected) return;
    watcher.disconnect();
    session.delete();
    root.dataset.session = 'deleted';
  });
  watcher.observe(document.body, { childList: true, subtree: true });
  stepper.start();
}
