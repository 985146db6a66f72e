// W5, the KV-cache stepper: the tiny model (seed 1) prefills a prompt, then
// decodes one token at a time through the core's KV cache. After every step
// the core also recomputes the whole sequence without a cache and reports the
// largest difference between the two sets of logits (wasm/bindings_session.cpp).
// Shown per step: the layer-0 key cache [S, dh] of one KV head with the new
// rows marked, the step's mask [T_new, S] with its diagonal offset
// (history = S - T_new), the step's attention for one layer and query head,
// and the check against the full pass. Below, the payload calculator.
//
// Controls (data-testid): w5-prompt, w5-prefill, w5-token, w5-step, w5-reset,
// w5-kv-head, w5-layer, w5-head. Readouts: w5-position, w5-cache-rows,
// w5-cache-shape, w5-history, w5-verdict, w5-max-diff, w5-argmax, w5-log
// (one row per step). URL (prefix w5): prompt, steps (the decoded ids, replayed
// on load), kvhead, layer, head, and the calculator's preset, dtype, context, batch.
//
// One DecodeSession lives as long as the widget; it is reset, never recreated,
// and freed (.delete()) when the widget leaves the page.
import './kv-stepper.css';
import { CoreError, RawCore } from '../lib/core';
import { diverging, sequential } from '../lib/colormap';
import { tabulated } from '../lib/color-table';
import { el, formatNumber, labelled, select, setStatus } from '../lib/dom';
import { Heatmap } from '../lib/heatmap';
import type { WidgetContext } from '../lib/widget';
import { payloadCalculator } from './kv-payload';
import { StateGrid } from './state-grid';

/** One step's report from DecodeSession.prefill / .step. */
interface StepReport {
  position: number;             // the cache's counter after the step (= S)
  history: number;              // keys cached before the step
  new_tokens: number[];         // [T_new]
  tokens: number[];             // all so far, [S]
  cache_shape: [number, number, number, number];  // [B, Hkv, S, dh]
  cache_scalars: number;
  cache_bytes_fp32: number;
  payload_scalars_per_token: number;
  keys: number[][][];           // layer-0 keys [Hkv][S][dh], after RoPE
  mask: number[][];             // [T_new][S], 1 = visible
  probabilities: number[][][][];  // [L][Hq][T_new][S]
  cached_logits: number[][];    // [T_new][V]
  full_logits: number[][];      // [T_new][V]
  max_abs_diff: number;
  argmax_agrees: boolean;
}

interface DecodeSession {
  prefill(options: string): string;
  step(options: string): string;
  reset(): void;
  delete(): void;
}

// The session's own limit (max_session_tokens in wasm/bindings_session.cpp).
const maxTokens = 64;
const vocabSize = 32;       // the tiny model's vocabulary: ids 0 .. 31
// Cached and full logits are the same float32 sums in the same order; see the text below.
const tolerance = 1e-5;
const defaultPrompt = [1, 2, 3];

const fmt = (n: number) => n.toLocaleString('en-US');

/** "1, 2, 3" into token ids, or what is wrong with the text. */
function parseTokens(text: string, limit: number): number[] | string {
  const parts = text.split(/[\s,]+/).filter((p) => p !== '');
  if (parts.length === 0) return 'Type at least one token id, e.g. 1,2,3.';
  if (parts.length > limit) return `${parts.length} ids given; the stepper keeps at most ${limit} tokens.`;
  const ids: number[] = [];
  for (const part of parts) {
    if (!/^\d+$/.test(part) || Number(part) >= vocabSize) return `"${part}" is not a token id: ids are whole numbers from 0 to ${vocabSize - 1}.`;
    ids.push(Number(part));
  }
  return ids;
}

function argmax(row: number[]): number {
  let best = 0;
  for (let v = 1; v < row.length; v++) if (row[v] > row[best]) best = v;
  return best;
}

function run(session: DecodeSession, method: 'prefill' | 'step', options: unknown): StepReport {
  const report = JSON.parse(session[method](JSON.stringify(options)));
  if (report && typeof report === 'object' && 'error' in report) throw new CoreError(String(report.error));
  return report as StepReport;
}

function formatDiff(diff: number): string {
  return diff === 0 ? '0' : diff.toExponential(2);
}

export function mountKvStepper(root: HTMLElement, context: WidgetContext): void {
  const { core, state } = context;
  const Session = (core as RawCore & { DecodeSession?: new (options: string) => DecodeSession }).DecodeSession;
  if (typeof Session !== 'function') throw new CoreError('the wasm core has no DecodeSession');
  const session = new Session(JSON.stringify({ seed: 1 }));
  root.dataset.session = 'live';  // 'deleted' once freed (the tests read it)

  // ---- controls
  const prompt = el('input', { type: 'text', inputmode: 'numeric', autocomplete: 'off', spellcheck: 'false', class: 'kv-prompt', 'data-testid': 'w5-prompt', value: defaultPrompt.join(',') });
  const prefillButton = el('button', { type: 'button', 'data-testid': 'w5-prefill' }, 'Prefill');
  const tokenInput = el('input', { type: 'text', inputmode: 'numeric', autocomplete: 'off', spellcheck: 'false', class: 'kv-token', 'data-testid': 'w5-token' });
  const stepButton = el('button', { type: 'button', 'data-testid': 'w5-step' }, 'Decode next token');
  const resetButton = el('button', { type: 'button', class: 'secondary', 'data-testid': 'w5-reset' }, 'Reset');
  const kvHeadSelect = select([['0', '0']], '0');
  const layerSelect = select([['0', '0']], '0');
  const headSelect = select([['0', '0']], '0');
  kvHeadSelect.dataset.testid = 'w5-kv-head';
  layerSelect.dataset.testid = 'w5-layer';
  headSelect.dataset.testid = 'w5-head';

  const status = el('p', { class: 'status', 'data-testid': 'w5-status' });

  // ---- summary of the cache
  const position = el('strong', { 'data-testid': 'w5-position' }, '0');
  const cacheRows = el('strong', { 'data-testid': 'w5-cache-rows' }, '0');
  const cacheShape = el('span', { 'data-testid': 'w5-cache-shape' }, '–');
  const cacheSize = el('span', { 'data-testid': 'w5-cache-bytes' }, '–');
  const tokenLine = el('span', { 'data-testid': 'w5-tokens' }, '–');
  const greedy = el('strong', { 'data-testid': 'w5-greedy' }, '–');
  const summary = el(
    'dl',
    { class: 'kv-summary' },
    el('div', {}, el('dt', {}, 'Position'), el('dd', {}, position, ' (the next token’s position)')),
    el('div', {}, el('dt', {}, 'Cache rows S'), el('dd', {}, cacheRows, ' per layer and KV head')),
    el('div', {}, el('dt', {}, 'Cache shape [B, Hkv, S, dh]'), el('dd', {}, cacheShape, ', keys and values in each layer')),
    el('div', {}, el('dt', {}, 'Cache size'), el('dd', {}, cacheSize)),
    el('div', { class: 'kv-wide' }, el('dt', {}, 'Tokens'), el('dd', {}, tokenLine)),
    el('div', {}, el('dt', {}, 'Greedy next token'), el('dd', {}, greedy)),
  );

  // ---- the three pictures of the latest step
  let report: StepReport | null = null;  // the latest step's
  let steps: number[] = [];              // ids decoded since the prefill
  const keysMap = new Heatmap({ title: 'Layer-0 key cache, KV head 0', rowAxis: 'position', colAxis: 'channel', maxCellPx: 16 });
  const keysStage = el('div', { class: 'kv-keys-scroll' }, keysMap.root);
  const maskGrid = new StateGrid({
    label: 'Mask of the latest step: rows are its new queries, columns every cached key',
    styles: [
      { fill: '#e8e8ec', texture: 'hatch', ink: '#8a8a96' },
      { fill: '#e8e8ec', texture: 'solid' },
      { fill: '#3b4cc0', texture: 'solid' },
    ],
    maxHeight: 240,
    maxCellPx: 28,
    idleText: 'Point at a cell, or focus the mask and use the arrow keys, to read it.',
    describe: (t, s, value) => {
      const q = report!.history + t;
      return `Query at position ${q}, key ${s}: ${value === 2 ? 'visible' : `masked (${s} is after ${q})`}.`;
    },
  });
  const maskOffset = el('p', { class: 'kv-caption', 'data-testid': 'w5-mask-offset' });
  const maskText = el('pre', { class: 'kv-mask-text', 'data-testid': 'w5-mask-text', tabindex: 0, role: 'region', 'aria-label': 'Mask as 0/1 rows' });
  const attentionMap = new Heatmap({ title: 'Attention of the latest step', rowAxis: 'query', colAxis: 'key position', maxCellPx: 24 });
  const attentionNote = el('p', { class: 'kv-caption' });

  const panels = el(
    'div',
    { class: 'kv-panels' },
    el(
      'section',
      { class: 'kv-panel', 'aria-label': 'Layer-0 key cache' },
      el('p', { class: 'kv-panel-title' }, 'Layer-0 keys in the cache'),
      el('div', { class: 'controls' }, labelled('KV head', kvHeadSelect)),
      keysStage,
      el('p', { class: 'kv-caption' }, 'Each row is one position’s key after RoPE, as the cache stores it. Rows this step appended are labelled +; the newest is outlined. Prefill appends one row per prompt token, a decode step one.'),
    ),
    el(
      'section',
      { class: 'kv-panel', 'aria-label': 'Mask of the latest step' },
      el('p', { class: 'kv-panel-title' }, 'Mask of the latest step'),
      maskGrid.root,
      maskOffset,
      el('details', {}, el('summary', {}, 'As 0/1 rows'), maskText),
      el('p', { class: 'kv-caption' }, el('span', { class: 'kv-swatch kv-swatch-visible', 'aria-hidden': 'true' }), ' visible   ', el('span', { class: 'kv-swatch kv-swatch-masked', 'aria-hidden': 'true' }), ' masked'),
    ),
    el(
      'section',
      { class: 'kv-panel kv-panel-wide', 'aria-label': 'Attention of the latest step' },
      el('p', { class: 'kv-panel-title' }, 'Attention of the latest step'),
      el('div', { class: 'controls' }, labelled('Layer', layerSelect), labelled('Query head', headSelect)),
      attentionMap.root,
      attentionNote,
    ),
  );

  // ---- the check: cached logits against a full recomputation
  const verdict = el('span', { class: 'kv-badge', 'data-testid': 'w5-verdict' }, '–');
  const maxDiff = el('span', { 'data-testid': 'w5-max-diff' }, '–');
  const argmaxText = el('span', { 'data-testid': 'w5-argmax' }, '–');
  const logBody = el('tbody');
  const log = el(
    'table',
    { class: 'data kv-log', 'data-testid': 'w5-log' },
    el('caption', {}, 'Every step so far'),
    el(
      'thead',
      {},
      el('tr', {}, ...['Step', 'New tokens', 'Position after', 'History', 'max |cached − full|', 'Argmax', 'Check'].map((h) => el('th', { scope: 'col' }, h))),
    ),
    logBody,
  );
  const logScroll = el('div', { class: 'kv-log-scroll', tabindex: 0, role: 'region', 'aria-label': 'Step log' }, log);
  const check = el(
    'section',
    { class: 'kv-check', 'aria-label': 'Cached against full recomputation', 'data-testid': 'w5-check' },
    el('p', { class: 'kv-check-line' }, verdict, ' Largest difference between the cached and the fully recomputed logits of this step: ', maxDiff, ` (tolerance ${tolerance.toExponential(0)}). Argmax: `, argmaxText, '.'),
    el(
      'p',
      { class: 'kv-caption' },
      'Why about 0: the cache holds exactly the keys and values that the full pass recomputes, and the core adds them up in a fixed order, so both paths do the same float32 arithmetic and usually agree to the last bit. ' +
        'The tolerance leaves room for a different summation order, such as a GPU kernel’s; a real bug, like a new token at the wrong position or a mask one column off, moves the logits by far more.',
    ),
    logScroll,
  );

  root.append(
    el(
      'div',
      { class: 'controls kv-controls' },
      labelled('Prompt', prompt, `token ids 0 to ${vocabSize - 1}, comma-separated`),
      prefillButton,
      labelled('Next token', tokenInput, 'empty: the greedy choice'),
      stepButton,
      resetButton,
    ),
    status,
    summary,
    panels,
    check,
    payloadCalculator(core, state),
  );

  // ---- drawing a report
  function fillSelect(node: HTMLSelectElement, count: number, label: (i: number) => string): void {
    if (node.options.length === count) return;
    const value = Math.min(Number(node.value), count - 1);
    node.replaceChildren(...Array.from({ length: count }, (_, i) => el('option', { value: i }, label(i))));
    node.value = String(value);
  }

  function drawKeys(): void {
    if (!report) return;
    const h = Number(kvHeadSelect.value);
    const keys = report.keys[h];  // [S][dh]
    const S = keys.length, dh = keys[0].length;
    let limit = 0;
    for (const head of report.keys) for (const row of head) for (const v of row) limit = Math.max(limit, Math.abs(v));
    const firstNew = report.history;
    keysMap.setTitle(`Layer-0 key cache, KV head ${h}`);
    keysMap.setData({
      rows: S,
      cols: dh,
      value: (s, d) => keys[s][d],
      allowed: () => true,
      rowLabel: (s) => (s >= firstNew ? `+${s}` : String(s)),
      colLabel: (d) => String(d),
      scale: tabulated(diverging(limit), -limit, limit),
      domain: [-limit, limit],
      describe: (s, d) =>
        `KV head ${h}, position ${s}, channel ${d}: ${formatNumber(keys[s][d])}. ` +
        (s >= firstNew ? 'Appended by this step.' : 'Cached by an earlier step, unchanged since.'),
    });
    keysMap.highlightRow(S - 1);
    // The newest rows are at the bottom: keep them in view.
    keysStage.scrollTop = keysStage.scrollHeight;
  }

  function drawAttention(): void {
    if (!report) return;
    const layer = Number(layerSelect.value), head = Number(headSelect.value);
    const probs = report.probabilities[layer][head];  // [T_new][S]
    const { mask, history } = report;
    const Hq = report.probabilities[0].length, Hkv = report.cache_shape[1];
    attentionMap.setTitle(`Attention of the latest step, layer ${layer}, head ${head}`);
    attentionMap.setData({
      rows: probs.length,
      cols: probs[0].length,
      value: (t, s) => probs[t][s],
      allowed: (t, s) => mask[t][s] === 1,
      rowLabel: (t) => String(history + t),
      colLabel: (s) => String(s),
      scale: tabulated(sequential(0, 1), 0, 1),
      domain: [0, 1],
      describe: (t, s) =>
        mask[t][s] === 1
          ? `Layer ${layer}, head ${head}: query at position ${history + t} puts weight ${formatNumber(probs[t][s])} on key ${s}.`
          : `Layer ${layer}, head ${head}: key ${s} is masked for the query at position ${history + t}.`,
    });
    attentionNote.textContent =
      `Query head ${head} reads KV head ${Math.floor(head / (Hq / Hkv))} (${Hq / Hkv} query heads share each of the ${Hkv} KV heads). ` +
      (probs.length === 1 ? 'A decode step has a single new query: one row over every cached key.' : `Prefill computes all ${probs.length} rows at once.`);
  }

  function drawMask(): void {
    if (!report) return;
    const { mask, history, position: S } = report;
    const T = mask.length;
    const states = new Uint8Array(T * S);
    for (let t = 0; t < T; t++) for (let s = 0; s < S; s++) states[t * S + s] = mask[t][s] === 1 ? 2 : 0;
    maskGrid.setData(T, S, states);
    maskText.textContent = mask.map((row) => row.join(' ')).join('\n');
    const offset = el('strong', { 'data-testid': 'w5-history' }, String(history));
    maskOffset.replaceChildren(
      T === 1 && history > 0
        ? `Decode: 1 new query, S = ${S} keys. History = S − T_new = `
        : `${history === 0 ? 'Prefill' : 'Chunk'}: ${T} new queries, S = ${S} keys. History = S − T_new = `,
      offset,
      T === 1 && history > 0
        ? `, so the diagonal sits ${history} columns right of where it would start and the single row sees every key: decoding needs no mask.`
        : history === 0
          ? ': the plain lower triangle; query t sees keys 0 to t.'
          : `: the diagonal moves right by ${history}.`,
    );
  }

  function show(next: StepReport): void {
    report = next;
    panels.hidden = false;
    check.hidden = false;
    const [B, Hkv, S, dh] = next.cache_shape;
    fillSelect(kvHeadSelect, Hkv, String);
    fillSelect(layerSelect, next.probabilities.length, String);
    fillSelect(headSelect, next.probabilities[0].length, String);
    position.textContent = String(next.position);
    cacheRows.textContent = String(S);
    cacheShape.textContent = `[${B}, ${Hkv}, ${S}, ${dh}]`;
    cacheSize.textContent =
      `${fmt(next.cache_scalars)} scalars = ${fmt(next.payload_scalars_per_token)} per token × ${S} tokens, ` +
      `${fmt(next.cache_bytes_fp32)} bytes in fp32`;
    const promptLength = next.tokens.length - steps.length;
    tokenLine.textContent =
      `prompt ${next.tokens.slice(0, promptLength).join(', ')}` + (steps.length ? `; decoded ${steps.join(', ')}` : '');
    const last = next.cached_logits[next.cached_logits.length - 1];
    const nextToken = argmax(last);
    greedy.textContent = String(nextToken);
    tokenInput.placeholder = `greedy: ${nextToken}`;
    drawKeys();
    drawMask();
    drawAttention();

    const pass = next.max_abs_diff <= tolerance && next.argmax_agrees;
    verdict.textContent = pass ? 'PASS' : 'FAIL';
    verdict.className = `kv-badge ${pass ? 'pass' : 'fail'}`;
    maxDiff.textContent = formatDiff(next.max_abs_diff);
    const fullBest = argmax(next.full_logits[next.full_logits.length - 1]);
    argmaxText.textContent = next.argmax_agrees
      ? `cached and full agree on every new row (last row: token ${nextToken})`
      : `cached and full DISAGREE (last row: cached ${nextToken}, full ${fullBest})`;
    const stepName = next.history === 0 ? 'prefill' : `decode ${steps.length}`;
    logBody.append(
      el(
        'tr',
        { 'data-testid': 'w5-log-row' },
        el('td', {}, stepName),
        el('td', {}, next.new_tokens.join(', ')),
        el('td', { class: 'number' }, String(next.position)),
        el('td', { class: 'number' }, String(next.history)),
        el('td', { class: 'number' }, formatDiff(next.max_abs_diff)),
        el('td', {}, next.argmax_agrees ? 'agrees' : 'differs'),
        el('td', { class: pass ? 'pass' : 'fail' }, pass ? 'PASS' : 'FAIL'),
      ),
    );
    // The newest step is at the bottom of the log: keep it in view.
    logScroll.scrollTop = logScroll.scrollHeight;
    stepButton.disabled = next.position >= maxTokens;
  }

  function clearViews(): void {
    report = null;
    logBody.replaceChildren();
    for (const node of [position, cacheRows]) node.textContent = '0';
    for (const node of [cacheShape, cacheSize, tokenLine, greedy, verdict, maxDiff, argmaxText]) node.textContent = '–';
    verdict.className = 'kv-badge';
    tokenInput.placeholder = '';
    stepButton.disabled = true;
    // Nothing cached, nothing to picture or check.
    panels.hidden = true;
    check.hidden = true;
  }

  // ---- actions
  function prefill(ids: number[]): boolean {
    try {
      const next = run(session, 'prefill', { tokens: ids });
      steps = [];
      logBody.replaceChildren();
      show(next);
      return true;
    } catch (error) {
      setStatus(status, `The core refused the prompt: ${error instanceof Error ? error.message : String(error)}.`, 'error');
      return false;
    }
  }

  function decode(token: number): boolean {
    if (!report) {
      setStatus(status, 'Prefill a prompt first: the cache is empty.', 'error');
      return false;
    }
    try {
      const next = run(session, 'step', { token });
      steps.push(token);
      show(next);
      return true;
    } catch (error) {
      setStatus(status, `The core refused this step: ${error instanceof Error ? error.message : String(error)}.`, 'error');
      return false;
    }
  }

  function afterStep(): void {
    if (!report) return;
    setStatus(
      status,
      report.position >= maxTokens
        ? `The cache holds ${report.position} tokens, the stepper's limit. Reset or prefill to start again.`
        : report.history === 0
          ? `Prefilled ${report.new_tokens.length} tokens in one pass. Decode the next token, the greedy choice or one you type.`
          : `Decoded token ${report.new_tokens[0]} at position ${report.history}.`,
    );
    saveState();
  }

  // Typing checks the prompt at once; the cache changes only on Prefill (or Enter).
  const promptHint = root.querySelector<HTMLElement>(`#${prompt.getAttribute('aria-describedby')}`)!;
  prompt.addEventListener('input', () => {
    const ids = parseTokens(prompt.value, maxTokens);
    if (typeof ids === 'string') prompt.setAttribute('aria-invalid', 'true');
    else prompt.removeAttribute('aria-invalid');
    promptHint.textContent =
      typeof ids === 'string' ? ids : `Prefill runs these ${ids.length} id${ids.length === 1 ? '' : 's'} in one pass, from an empty cache.`;
  });
  prefillButton.addEventListener('click', () => {
    prompt.removeAttribute('aria-invalid');
    const ids = parseTokens(prompt.value, maxTokens);
    if (typeof ids === 'string') {
      prompt.setAttribute('aria-invalid', 'true');
      setStatus(status, ids, 'error');
      return;
    }
    if (prefill(ids)) afterStep();
  });
  stepButton.addEventListener('click', () => {
    tokenInput.removeAttribute('aria-invalid');
    let token: number;
    if (tokenInput.value.trim() === '') {
      if (!report) return;
      token = argmax(report.cached_logits[report.cached_logits.length - 1]);
    } else {
      const text = tokenInput.value.trim();
      if (!/^\d+$/.test(text) || Number(text) >= vocabSize) {
        tokenInput.setAttribute('aria-invalid', 'true');
        setStatus(status, `Next token: "${text}" is not a token id; type one whole number from 0 to ${vocabSize - 1}, or leave the box empty for the greedy choice.`, 'error');
        return;
      }
      token = Number(text);
    }
    if (decode(token)) {
      tokenInput.value = '';
      afterStep();
    }
  });
  resetButton.addEventListener('click', () => {
    session.reset();
    steps = [];
    clearViews();
    setStatus(status, 'The cache is empty. Prefill a prompt to start again.');
    saveState();
  });
  // Enter in a text box does what its button does.
  prompt.addEventListener('keydown', (e) => e.key === 'Enter' && prefillButton.click());
  tokenInput.addEventListener('keydown', (e) => e.key === 'Enter' && !stepButton.disabled && stepButton.click());
  kvHeadSelect.addEventListener('change', () => (drawKeys(), saveState()));
  layerSelect.addEventListener('change', () => (drawAttention(), saveState()));
  headSelect.addEventListener('change', () => (drawAttention(), saveState()));

  // ---- the URL (at most every 250 ms)
  let saveTimer: number | null = null;
  function saveState(): void {
    if (saveTimer !== null) return;
    saveTimer = window.setTimeout(() => {
      saveTimer = null;
      state.set({
        prompt: prompt.value.trim() || null,
        steps: report && steps.length ? steps.join(',') : null,
        kvhead: kvHeadSelect.value, layer: layerSelect.value, head: headSelect.value,
      });
    }, 250);
  }

  // Free the session when the widget leaves the page (embind objects are not garbage-collected).
  const watcher = new MutationObserver(() => {
    if (root.isConnected) return;
    watcher.disconnect();
    session.delete();
    root.dataset.session = 'deleted';
  });
  watcher.observe(document.body, { childList: true, subtree: true });

  // ---- start: the link's prompt and steps, replayed, or the default prompt
  clearViews();
  const linkedPrompt = state.get('prompt');
  let ids = parseTokens(linkedPrompt ?? defaultPrompt.join(','), maxTokens);
  if (typeof ids === 'string') {
    setStatus(status, `The link's prompt was not usable (${ids}) Starting from ${defaultPrompt.join(', ')}.`, 'error');
    ids = defaultPrompt;
  }
  prompt.value = ids.join(',');
  if (!prefill(ids)) return;
  const linkedSteps = state.get('steps');
  const replay = linkedSteps ? parseTokens(linkedSteps, maxTokens - ids.length) : [];
  if (typeof replay === 'string') {
    setStatus(status, `The link's decoded steps were not usable: ${replay}`, 'error');
  } else {
    for (const token of replay) if (!decode(token)) break;
  }
  for (const [node, name] of [[kvHeadSelect, 'kvhead'], [layerSelect, 'layer'], [headSelect, 'head']] as const) {
    const value = state.get(name);
    if (value !== null && [...node.options].some((o) => o.value === value)) node.value = value;
  }
  drawKeys();
  drawAttention();
  if (status.dataset.kind !== 'error') afterStep();
}
