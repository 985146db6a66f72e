// What every trace says besides its probabilities, as the trace viewer shows
// it: the model's configuration, where it ran, the tokens, and the check records.
import type { CheckRecord, Trace } from '../../lib/core';
import { el } from '../../lib/dom';
import { count } from '../../lib/words';
import { kvHead } from '../shared/attention-view';

/** Errors and bounds: exponent for the tiny ones, which is most of them. */
export function formatError(value: number | null): string {
  if (value === null) return 'unbounded';
  if (value === 0) return '0';
  return Math.abs(value) < 1e-3 || Math.abs(value) >= 1e5 ? value.toExponential(2) : String(Number(value.toPrecision(6)));
}

/** A titled list of terms and values. */
export function definitions(title: string, rows: [string, string][]): HTMLElement {
  const list = el('dl');
  for (const [term, value] of rows) list.append(el('dt', {}, term), el('dd', {}, value));
  return el('section', {}, el('h3', { class: 'view-subtitle' }, title), list);
}

function weightsSource(weights: Record<string, unknown>): string {
  if (weights.source === 'seed') return `seeded random, seed ${String(weights.seed)} (untrained)`;
  if (weights.source === 'checkpoint') return `checkpoint ${String(weights.path)}`;
  return JSON.stringify(weights);
}

function modelSection(trace: Trace): HTMLElement {
  const c = trace.config;
  const group = c.n_heads / c.n_kv_heads;
  return definitions('Model', [
    ['name', c.name],
    ['layers', String(c.n_layers)],
    ['query / KV heads', `${c.n_heads} / ${c.n_kv_heads}: head h reads KV head ⌊h/${group}⌋${c.n_heads > 1 ? `, e.g. head ${c.n_heads - 1} reads ${kvHead(c, c.n_heads - 1)}` : ''}`],
    ['width, head dim, FFN', `${c.hidden_size}, ${c.head_dim}, ${c.ffn_size}`],
    ['vocabulary', String(c.vocab_size)],
    ['RoPE', `θ = ${c.rope_theta}, ${c.rope_pairing.replace('_', ' ')} pairing`],
    ['RMSNorm ε', String(c.rms_norm_eps)],
    ['tied embeddings', c.tie_embeddings ? 'yes' : 'no'],
  ]);
}

function buildSection(trace: Trace): HTMLElement {
  return definitions('Where it ran', [
    ['compiler', trace.build.compiler],
    ['platform', trace.build.platform],
    ['project version', trace.build.project_version],
    ['weights', weightsSource(trace.weights)],
    ['batch × tokens', `${trace.tokens.length} × ${trace.tokens[0].length}`],
  ]);
}

/** Each sequence's ids, or its token text exactly as written (quoted, with \n and the like escaped, never cut short). */
function tokensSection(trace: Trace): HTMLElement {
  const rows = el('ul', { class: 'token-rows', 'data-testid': 'trace-viewer-token-rows' });
  trace.tokens.forEach((ids, b) =>
    rows.append(el('li', {}, `sequence ${b}: ` + (trace.token_text ? trace.token_text[b].map((text) => JSON.stringify(text)).join(' ') : `ids ${ids.join(', ')}`))),
  );
  return el('section', {}, el('h3', { class: 'view-subtitle' }, trace.token_text ? 'Tokens' : 'Token ids'), rows);
}

/** Configuration, build and tokens of any trace. */
export function traceSummary(trace: Trace): HTMLElement[] {
  return [el('div', { class: 'summary-grid' }, modelSection(trace), buildSection(trace)), tokensSection(trace)];
}

export function checksTable(checks: CheckRecord[], allPassed: boolean): HTMLElement {
  const failed = checks.filter((c) => !c.passed).length;
  const verdict =
    checks.length === 0 ? 'The trace records no checks.'
    : checks.length === 1 ? (allPassed ? 'Its one check passed.' : 'Its one check failed.')
    : allPassed ? `All ${checks.length} checks passed.`
    : `${failed} of ${count(checks.length, 'check')} failed.`;
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
        { class: 'data checks', 'data-testid': 'trace-viewer-checks' },
        el('caption', { class: 'view-caption' }, 'Each check: its verdict, what it compares, the largest error found and the bound it must meet.'),
        // The verdict comes second so that it stays in view when a phone scrolls the table.
        el('thead', {}, el('tr', {}, ...['id', 'verdict', 'check', 'largest error', 'must be'].map((h) => el('th', { scope: 'col' }, h)))),
        body,
      ),
    ),
  );
}
