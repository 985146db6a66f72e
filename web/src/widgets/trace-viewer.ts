// W8, open a trace: a file from `attn verify --export-trace` (or the pretrained
// probe), or the page's own from the wasm core, checked against the schema and
// shown with the explorer's heatmaps, its configuration, build and check records.
// A file that is not a valid trace gets one message naming the problem; the
// widget keeps showing whatever it showed before.
import { call, CoreError, CheckRecord, Trace } from '../lib/core';
import { el, labelled, setStatus } from '../lib/dom';
import type { WidgetContext } from '../lib/widget';
import { AttentionView, kvHead } from './attention-view';
import { checkTraceSize, parseTrace, TraceFormatError, validateTrace } from './trace-file';

const noMixingNote =
  'A trace file keeps the probabilities, not the value vectors, so it cannot show what each key adds to the head output. ' +
  'The attention explorer above computes that live for any ids.';

export function mountTraceViewer(root: HTMLElement, context: WidgetContext): void {
  const status = el('p', { class: 'status', 'data-testid': 'w8-status' });
  const fileInput = el('input', { type: 'file', accept: '.json,application/json', 'data-testid': 'w8-file' });
  const ownButton = el('button', { type: 'button', class: 'secondary', 'data-testid': 'w8-load-own' }, "Load the page's own trace");
  const dropZone = el(
    'div',
    { class: 'drop-zone' },
    labelled('Trace file (JSON)', fileInput, 'or drop the file onto this widget'),
    ownButton,
  );
  const summary = el('div', { class: 'trace-summary', 'data-testid': 'w8-summary', hidden: true });
  const view = new AttentionView({ testPrefix: 'w8', batchLabel: (b) => `sequence ${b}`, noMixingNote, onChange: () => {} });
  const controls = el('div', { class: 'controls', hidden: true }, ...view.controls);
  const checks = el('div', { class: 'trace-checks', hidden: true });
  view.root.hidden = true;
  // The checks come last: the heatmaps should sit right under their controls.
  root.append(dropZone, status, summary, controls, view.root, checks);
  setStatus(status, 'No trace open yet. Choose a file, or load the trace the page computes itself.');

  const show = (trace: Trace, source: string) => {
    summary.replaceChildren(...summaryParts(trace));
    checks.replaceChildren(checksTable(trace.checks, trace.all_checks_passed));
    view.show({ config: trace.config, tokens: trace.tokens, tokenText: trace.token_text, probabilities: trace.layers.map((l) => l.probabilities) }, view.selection);
    for (const node of [summary, controls, view.root, checks]) node.hidden = false;
    setStatus(status, `Opened ${source}.`);
  };
  const refuse = (source: string, error: unknown) => {
    const reason = error instanceof TraceFormatError || error instanceof CoreError ? error.message : String(error);
    setStatus(status, `Could not open ${source}: ${reason}`, 'error');
  };

  const openFile = async (file: File) => {
    try {
      checkTraceSize(file.size);
      show(parseTrace(await file.text()), `${file.name} (${formatBytes(file.size)})`);
    } catch (error) {
      refuse(file.name, error);
    }
  };
  fileInput.addEventListener('change', () => {
    const file = fileInput.files?.[0];
    if (file) void openFile(file);
    fileInput.value = ''; // choosing the same file again, after fixing it, must fire change
  });
  ownButton.addEventListener('click', () => {
    try {
      // The same defaults as `attn verify`: ids 1..6, batch 2, seed 1.
      show(validateTrace(call<unknown>(context.core, 'trace', {})), "the page's own trace (wasm core, ids 1–6, batch 2)");
    } catch (error) {
      refuse("the page's own trace", error);
    }
  });
  acceptDrops(root.closest<HTMLElement>('.widget') ?? root, dropZone, openFile, (message) => setStatus(status, message, 'error'));
}

/** Makes `target` take a dropped file, lighting up `zone` while something is dragged over. */
function acceptDrops(target: HTMLElement, zone: HTMLElement, open: (file: File) => void, refuse: (message: string) => void): void {
  target.addEventListener('dragover', (e) => {
    e.preventDefault(); // without this the browser opens the file itself
    if (e.dataTransfer) e.dataTransfer.dropEffect = 'copy';
    zone.classList.add('dragging');
  });
  target.addEventListener('dragleave', (e) => {
    if (!target.contains(e.relatedTarget as Node | null)) zone.classList.remove('dragging');
  });
  target.addEventListener('drop', (e) => {
    e.preventDefault();
    zone.classList.remove('dragging');
    const files = e.dataTransfer?.files;
    if (!files || files.length === 0) refuse('Nothing to open: drop a trace file (JSON), not text or a link.');
    else if (files.length > 1) refuse(`${files.length} files dropped; open one trace at a time.`);
    else open(files[0]);
  });
}

// ---------------------------------------------------------------- summary

function formatBytes(bytes: number): string {
  return bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} kB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** Errors and bounds: exponent for the tiny ones, which is most of them. */
function formatError(value: number | null): string {
  if (value === null) return 'unbounded';
  if (value === 0) return '0';
  return Math.abs(value) < 1e-3 || Math.abs(value) >= 1e5 ? value.toExponential(2) : String(Number(value.toPrecision(6)));
}

function definitions(title: string, rows: [string, string][]): HTMLElement {
  const list = el('dl');
  for (const [term, value] of rows) list.append(el('dt', {}, term), el('dd', {}, value));
  return el('section', {}, el('h3', { class: 'view-subtitle' }, title), list);
}

function weightsSource(weights: Record<string, unknown>): string {
  if (weights.source === 'seed') return `seeded random, seed ${String(weights.seed)} (untrained)`;
  if (weights.source === 'checkpoint') return `checkpoint ${String(weights.path)}`;
  return JSON.stringify(weights);
}

function summaryParts(trace: Trace): HTMLElement[] {
  const c = trace.config;
  const group = c.n_heads / c.n_kv_heads;
  const model = definitions('Model', [
    ['name', c.name],
    ['layers', String(c.n_layers)],
    ['query / KV heads', `${c.n_heads} / ${c.n_kv_heads}: head h reads KV head ⌊h/${group}⌋${c.n_heads > 1 ? `, e.g. head ${c.n_heads - 1} reads ${kvHead(c, c.n_heads - 1)}` : ''}`],
    ['width, head dim, FFN', `${c.hidden_size}, ${c.head_dim}, ${c.ffn_size}`],
    ['vocabulary', String(c.vocab_size)],
    ['RoPE', `θ = ${c.rope_theta}, ${c.rope_pairing.replace('_', ' ')} pairing`],
    ['RMSNorm ε', String(c.rms_norm_eps)],
    ['tied embeddings', c.tie_embeddings ? 'yes' : 'no'],
  ]);
  const build = definitions('Where it ran', [
    ['compiler', trace.build.compiler],
    ['platform', trace.build.platform],
    ['project version', trace.build.project_version],
    ['weights', weightsSource(trace.weights)],
    ['batch × tokens', `${trace.tokens.length} × ${trace.tokens[0].length}`],
  ]);
  const tokens = el('ul', { class: 'token-rows' });
  trace.tokens.forEach((row, b) =>
    tokens.append(el('li', {}, `sequence ${b}: ` + (trace.token_text ? trace.token_text[b].map((text) => JSON.stringify(text)).join(' ') : `ids ${row.join(', ')}`))),
  );
  const parts: HTMLElement[] = [
    el('div', { class: 'summary-grid' }, model, build),
    el('section', {}, el('h3', { class: 'view-subtitle' }, trace.token_text ? 'Tokens' : 'Token ids'), tokens),
  ];
  if ('sink_stats' in trace)
    parts.push(el('details', {}, el('summary', {}, 'Attention-sink statistics recorded by the probe'), el('pre', {}, JSON.stringify(trace.sink_stats, null, 2))));
  return parts;
}

function checksTable(checks: CheckRecord[], allPassed: boolean): HTMLElement {
  const failed = checks.filter((c) => !c.passed).length;
  const verdict = checks.length === 0 ? 'The trace records no checks.' : allPassed ? `All ${checks.length} checks passed.` : `${failed} of ${checks.length} checks failed.`;
  const body = el('tbody');
  for (const check of checks) {
    body.append(
      el(
        'tr',
        {},
        el('td', {}, check.id),
        el('td', { class: check.passed ? 'pass' : 'fail' }, check.passed ? 'PASS' : 'FAIL'),
        el('td', {}, el('code', {}, check.name), el('br'), check.compares),
        el('td', { class: 'number' }, formatError(check.max_abs_error)),
        el('td', { class: 'number' }, `${check.relation === '<=' ? '≤' : '>'} ${formatError(check.tolerance)}`),
      ),
    );
  }
  return el(
    'section',
    {},
    el('h3', { class: 'view-subtitle' }, 'Checks'),
    el('p', { class: `verdict ${allPassed ? 'pass' : 'fail'}` }, verdict),
    el(
      'div',
      { class: 'scroll-x', tabindex: 0, role: 'region', 'aria-label': 'check records' },
      el(
        'table',
        { class: 'data checks', 'data-testid': 'w8-checks' },
        el('caption', { class: 'view-caption' }, 'Each check: its verdict, what it compares, the largest error found and the bound it must meet.'),
        // The verdict comes second so that it stays in view when a phone scrolls the table.
        el('thead', {}, el('tr', {}, ...['id', 'verdict', 'check', 'largest error', 'must be'].map((h) => el('th', { scope: 'col' }, h)))),
        body,
      ),
    ),
  );
}
