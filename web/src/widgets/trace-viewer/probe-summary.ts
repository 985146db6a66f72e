// The record `attn probe` adds to its trace, as the trace viewer shows it:
// which checkpoint ran on which prompt, the tokens it finds most likely next, what
// it wrote greedily, whether decoding through the KV cache matched one full pass,
// and where and how fast it ran (device, precision, cache size, tokens per second).
// Token text is quoted exactly as the file holds it (JSON escapes, so a newline reads \n).
import { el, formatNumber } from '../../lib/dom';
import { count } from '../../lib/words';
import type { ProbeDevice, ProbeRecord } from './trace-file';
import { definitions, formatError } from './trace-summary';

function promptText(prompt: ProbeRecord['prompt']): string {
  if (prompt.source === 'ids') return `token ids ${prompt.ids.join(', ')}, used as given`;
  return JSON.stringify(prompt.text) + (prompt.chat ? ', wrapped in the chat template' : '');
}

function runSection(probe: ProbeRecord, tokenCount: number): HTMLElement {
  return definitions('The probe', [
    ['checkpoint', `${probe.model.name} (${probe.model.path})`],
    ['weights held in', probe.dtype],
    ['prompt', promptText(probe.prompt)],
    ['prompt tokens', String(tokenCount)],
  ]);
}

function bytesText(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const [unit, size] = bytes < 1024 ** 2 ? ['KiB', 1024] : bytes < 1024 ** 3 ? ['MiB', 1024 ** 2] : ['GiB', 1024 ** 3];
  return `${(bytes / size).toFixed(1)} ${unit}`;
}

function rateText(tokensPerSecond: number | null): string {
  return tokensPerSecond === null ? 'not timed' : `${tokensPerSecond.toFixed(tokensPerSecond < 10 ? 2 : 0)} tokens/s`;
}

function deviceText(device: ProbeDevice): string {
  if (device.kind === 'cpu') return `CPU: ${device.name}, ${device.threads_used} of ${count(device.hardware_threads, 'thread')}`;
  return (
    `GPU: ${device.name}, compute capability ${device.compute_capability}, ${bytesText(device.total_memory_bytes)}, ` +
    `driver ${device.driver_version}, CUDA runtime ${device.runtime_version}`
  );
}

function whereSection(probe: ProbeRecord): HTMLElement {
  const { device, precision, cache, timing } = probe;
  return definitions('Where and how it ran', [
    ['device', deviceText(device)],
    ['precision', `weights stored ${precision.weights_stored}, held as ${precision.weights_held}; activations ${precision.activations}`],
    ['KV cache', `${cache.dtype}: ${count(cache.tokens, 'token')} × ${bytesText(cache.bytes_per_token)} = ${bytesText(cache.total_bytes)}`],
    [
      'speed',
      `prompt in one pass ${rateText(timing.prefill_tokens_per_second)}, one token at a time through the cache ` +
        `${rateText(timing.cached_prefill_tokens_per_second)}; continuation ${rateText(timing.decode_tokens_per_second)} ` +
        `(${timing.decode_steps} step${timing.decode_steps === 1 ? '' : 's'})`,
    ],
    ['loading', `${timing.load_seconds.toFixed(2)} s; peak memory of the process ${bytesText(timing.peak_rss_bytes)}`],
  ]);
}

function topNextTable(probe: ProbeRecord): HTMLElement {
  const body = el('tbody');
  probe.top_next.forEach((token, rank) =>
    body.append(
      el(
        'tr',
        { 'data-token-id': token.id, 'data-probability': String(token.probability) },
        el('td', {}, String(rank + 1)),
        el('td', {}, el('code', {}, JSON.stringify(token.token_text))),
        el('td', { class: 'number' }, String(token.id)),
        el('td', { class: 'number' }, formatNumber(token.probability)),
        el('td', { class: 'number' }, token.logit.toFixed(3)),
      ),
    ),
  );
  return el(
    'section',
    {},
    el('h3', { class: 'view-subtitle' }, 'Most likely next tokens'),
    el(
      'div',
      { class: 'scroll-x', tabindex: 0, role: 'region', 'aria-label': 'most likely next tokens' },
      el(
        'table',
        { class: 'data top-next', 'data-testid': 'trace-viewer-top-next' },
        el('caption', { class: 'view-caption' }, 'After the prompt: the softmax of the last position’s logits, largest first.'),
        el('thead', {}, el('tr', {}, ...['rank', 'token', 'id', 'probability', 'logit'].map((h) => el('th', { scope: 'col' }, h)))),
        body,
      ),
    ),
  );
}

function continuationSection(probe: ProbeRecord): HTMLElement {
  const c = probe.continuation;
  const how =
    c.requested === 0
      ? 'No continuation was asked for.'
      : `${c.ids.length} of the ${count(c.requested, 'token')} asked for, each the most likely one, decoded one at a time through the KV cache` +
        (c.stopped_at_eos ? '; it stopped at the end-of-sequence token.' : '.');
  return el(
    'section',
    { 'data-testid': 'trace-viewer-continuation' },
    el('h3', { class: 'view-subtitle' }, 'Greedy continuation'),
    el('p', { class: 'continuation-text' }, el('code', {}, JSON.stringify(c.text))),
    el('p', { class: 'view-caption' }, how + (c.ids.length ? ` Tokens: ${c.token_text.map((text) => JSON.stringify(text)).join(' ')}.` : '')),
  );
}

function cachedVsFullSection(probe: ProbeRecord): HTMLElement {
  const c = probe.cached_vs_full;
  const differing = c.argmax_agrees.flatMap((agrees, t) => (agrees ? [] : [t]));
  const argmax = c.all_argmax_agree
    ? `the most likely next token agrees at ${c.positions === 1 ? 'the one position' : `all ${count(c.positions, 'position')}`}`
    : `the most likely next token differs at ${differing.length} of ${count(c.positions, 'position')} (${differing.join(', ')})`;
  const within = c.max_abs_diff <= c.tolerance;
  return el(
    'section',
    { 'data-testid': 'trace-viewer-cached-vs-full' },
    el('h3', { class: 'view-subtitle' }, 'Through the cache vs one full pass'),
    el(
      'p',
      { class: `verdict ${within && c.all_argmax_agree ? 'pass' : 'fail'}` },
      `Largest logit difference ${formatError(c.max_abs_diff)} (must be ≤ ${formatError(c.tolerance)}); ${argmax}.`,
    ),
    el('p', { class: 'view-caption' }, 'The prompt prefilled one token at a time through the KV cache, compared with all of it in one pass.'),
  );
}

/** The probe's sections, for a trace that has a probe record. */
export function probeSummary(probe: ProbeRecord, tokenCount: number): HTMLElement {
  return el(
    'div',
    { class: 'probe-summary', 'data-testid': 'trace-viewer-probe-summary' },
    el('div', { class: 'summary-grid' }, runSection(probe, tokenCount), cachedVsFullSection(probe)),
    el('div', { class: 'summary-grid' }, topNextTable(probe), continuationSection(probe)),
    el('div', { class: 'summary-grid', 'data-testid': 'trace-viewer-probe-run' }, whereSection(probe)),
  );
}
