// The KV-cache payload calculator of kv-stepper: how many bytes a cache stores per
// token, from the config alone, and for a whole context and batch:
//   scalars per token = 2 (keys and values) * n_layers * n_kv_heads * head_dim
// The per-token numbers come from the core's cachePayload(config); presets
// come from the core's config(name). The whole-cache total is per-token bytes
// x context x batch, multiplied here exactly (BigInt).
//
// Controls (data-testid): kv-stepper-preset, kv-stepper-layers, kv-stepper-kv-heads, kv-stepper-head-dim,
// kv-stepper-dtype, kv-stepper-context, kv-stepper-batch. Output: kv-stepper-scalars, kv-stepper-bytes-fp32,
// kv-stepper-bytes-bf16, kv-stepper-bytes-fp8, kv-stepper-total, kv-stepper-total-bytes, kv-stepper-payload-status.
import { CachePayload, Core, CoreError, ModelConfig } from '../../lib/core';
import { el, labelled, numberInput, select, setStatus } from '../../lib/dom';
import { markInvalid, readWhole, stillShowing } from '../../lib/fields';
import type { UrlState } from '../../lib/url-state';
import { count, groupDigits } from '../../lib/words';

const presets: [string, string][] = [
  ['tiny', 'tiny (the stepper’s model)'],
  ['tinyllama-1.1b', 'TinyLlama-1.1B'],
  ['custom', 'your own numbers'],
];
const dtypes: { value: string; label: string; bytes: number; field: keyof CachePayload }[] = [
  { value: 'fp32', label: 'fp32', bytes: 4, field: 'bytes_per_token_fp32' },
  { value: 'bf16', label: 'bf16', bytes: 2, field: 'bytes_per_token_16bit' },
  { value: 'fp8', label: 'fp8', bytes: 1, field: 'bytes_per_token_fp8' },
];

const fmt = groupDigits;

/** 1,476,395,008 -> "1.38 GiB": binary units, three significant digits. */
export function formatBytes(bytes: bigint): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'];
  let value = Number(bytes), unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${fmt(bytes)} B` : `${value.toPrecision(3)} ${units[unit]}`;
}

/** Builds the calculator (its state in the URL under the given prefix); returns its root. */
export function payloadCalculator(core: Core, state: UrlState): HTMLElement {
  const presetSelect = select(presets, 'tinyllama-1.1b');
  const layers = numberInput('number', 1, 1000, 1, 22);
  const kvHeads = numberInput('number', 1, 1024, 1, 4);
  const headDim = numberInput('number', 2, 4096, 2, 64);
  const dtype = select(dtypes.map((d) => [d.value, `${d.label} (${d.bytes} byte${d.bytes > 1 ? 's' : ''})`]), 'bf16');
  const context = numberInput('number', 1, 10_000_000, 1, 4096);
  const batch = numberInput('number', 1, 100_000, 1, 1);
  const ids: [HTMLElement, string][] = [
    [presetSelect, 'kv-stepper-preset'], [layers, 'kv-stepper-layers'], [kvHeads, 'kv-stepper-kv-heads'], [headDim, 'kv-stepper-head-dim'],
    [dtype, 'kv-stepper-dtype'], [context, 'kv-stepper-context'], [batch, 'kv-stepper-batch'],
  ];
  for (const [node, id] of ids) node.dataset.testid = id;

  const status = el('p', { class: 'status', 'data-testid': 'kv-stepper-payload-status' });
  const formula = el('p', { class: 'kv-formula', 'data-testid': 'kv-stepper-formula' });
  const scalars = el('strong', { 'data-testid': 'kv-stepper-scalars' });
  const byteCells = Object.fromEntries(dtypes.map((d) => [d.value, el('td', { class: 'number', 'data-testid': `kv-stepper-bytes-${d.value}` })]));
  const chosenCells = Object.fromEntries(dtypes.map((d) => [d.value, el('td', { class: 'kv-chosen' })]));
  const rows = dtypes.map((d) =>
    el('tr', { 'data-dtype': d.value }, el('th', { scope: 'row' }, `${d.label}, ${d.bytes} B a scalar`), byteCells[d.value], chosenCells[d.value]));
  const table = el(
    'table',
    { class: 'data kv-bytes' },
    el('caption', {}, 'Bytes per token, for one sequence'),
    el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'dtype'), el('th', { scope: 'col' }, 'bytes per token'), el('td', {}))),
    el('tbody', {}, ...rows),
  );
  const total = el('strong', { class: 'kv-total', 'data-testid': 'kv-stepper-total' });
  const totalBytes = el('span', { 'data-testid': 'kv-stepper-total-bytes' });
  const result = el(
    'div',
    { class: 'kv-payload-result' },
    formula,
    el('p', {}, 'Scalars per token: ', scalars, '.'),
    el('div', { class: 'scroll-x' }, table),
    el('p', {}, 'The whole cache: ', total, ' ', totalBytes),
  );

  let presetConfig: ModelConfig | null = null;
  const controls = el(
    'div',
    { class: 'controls kv-controls' },
    labelled('Model', presetSelect),
    labelled('Layers', layers, 'n_layers'),
    labelled('KV heads', kvHeads, 'n_kv_heads'),
    labelled('Head dim', headDim, 'head_dim, even'),
    labelled('Cache dtype', dtype),
    labelled('Context length', context, 'tokens per sequence'),
    labelled('Batch', batch, 'sequences'),
  );
  const root = el(
    'fieldset',
    { class: 'kv-payload', 'data-testid': 'kv-stepper-payload' },
    el('legend', {}, 'KV-cache payload calculator'),
    el('p', { class: 'kv-caption' }, 'What a cache stores per token depends on three numbers of the config. Pick a model or type your own.'),
    controls,
    status,
    result,
  );

  function fillFromPreset(name: string): void {
    presetConfig = core.config(name);
    layers.value = String(presetConfig.n_layers);
    kvHeads.value = String(presetConfig.n_kv_heads);
    headDim.value = String(presetConfig.head_dim);
  }

  // Each field's value in the result on show, for the status line while the field is invalid.
  const shown = new Map<HTMLInputElement, number>();

  function update(save: boolean): void {
    for (const [node] of ids) node.removeAttribute('aria-invalid');
    const fields: [HTMLInputElement, string][] = [[layers, 'Layers'], [kvHeads, 'KV heads'], [headDim, 'Head dim'], [context, 'Context length'], [batch, 'Batch']];
    const values: number[] = [];
    for (const [input, name] of fields) {
      const read = readWhole(input, name, Number(input.min), Number(input.max));
      if ('error' in read) {
        markInvalid([input]);
        const last = shown.get(input);
        setStatus(status, read.error + stillShowing(last === undefined ? null : [[name.toLowerCase(), last]]), 'error');
        result.classList.add('stale');
        return;
      }
      values.push(read.value);
    }
    const [L, Hkv, dh, T, B] = values;
    // A preset goes to the core as it is; your own numbers ride on a config the
    // core accepts (one query head per KV head; the other fields do not enter).
    const config: ModelConfig =
      presetSelect.value !== 'custom' && presetConfig
        ? presetConfig
        : { ...(presetConfig ?? core.config('tinyllama-1.1b')), name: 'custom', n_layers: L, n_kv_heads: Hkv, n_heads: Hkv, head_dim: dh, hidden_size: Hkv * dh };
    let payload: CachePayload;
    try {
      payload = core.cachePayload(config);
    } catch (error) {
      const message = error instanceof CoreError ? error.message : String(error);
      if (/head_dim/.test(message)) headDim.setAttribute('aria-invalid', 'true');
      setStatus(status, `The core refused this config: ${message}.`, 'error');
      result.classList.add('stale');
      return;
    }
    result.classList.remove('stale');
    fields.forEach(([input], i) => shown.set(input, values[i]));
    setStatus(status, presetSelect.value === 'custom' ? 'Your own numbers.' : `The ${config.name} config, as the core knows it.`);
    formula.textContent =
      `2 (keys and values) × ${count(L, 'layer')} × ${count(Hkv, 'KV head')} × ${count(dh, 'channel')} = ` +
      `${count(payload.scalars_per_token, 'scalar')} per token.`;
    scalars.textContent = fmt(payload.scalars_per_token);
    const chosen = dtypes.find((d) => d.value === dtype.value)!;
    for (const d of dtypes) {
      byteCells[d.value].textContent = `${fmt(payload[d.field])} B`;
      chosenCells[d.value].textContent = d === chosen ? '← chosen' : '';
      byteCells[d.value].parentElement!.classList.toggle('chosen', d === chosen);
    }
    const perToken = BigInt(payload[chosen.field]);
    const bytes = perToken * BigInt(T) * BigInt(B);
    total.textContent = formatBytes(bytes);
    totalBytes.textContent = `(${fmt(bytes)} bytes = ${fmt(perToken)} B × ${count(T, 'token')} × ${count(B, 'sequence')}, ${chosen.label})`;
    if (save) saveState();
  }

  function saveState(): void {
    const custom = presetSelect.value === 'custom';
    state.set({
      preset: presetSelect.value, dtype: dtype.value, context: context.value, batch: batch.value,
      layers: custom ? layers.value : null, kvheads: custom ? kvHeads.value : null, headdim: custom ? headDim.value : null,
    });
  }

  presetSelect.addEventListener('change', () => {
    if (presetSelect.value !== 'custom') fillFromPreset(presetSelect.value);
    update(true);
  });
  for (const input of [layers, kvHeads, headDim]) {
    input.addEventListener('input', () => {
      // Typing over a preset's numbers makes them your own.
      if (presetSelect.value !== 'custom') presetSelect.value = 'custom';
      update(true);
    });
  }
  for (const input of [context, batch]) input.addEventListener('input', () => update(true));
  dtype.addEventListener('change', () => update(true));

  // ---- from the URL
  const preset = state.get('preset');
  const linkedPreset = preset && presets.some(([p]) => p === preset) ? preset : 'tinyllama-1.1b';
  fillFromPreset(linkedPreset === 'custom' ? 'tinyllama-1.1b' : linkedPreset);
  presetSelect.value = linkedPreset;
  if (linkedPreset === 'custom') {
    for (const [input, name] of [[layers, 'layers'], [kvHeads, 'kvheads'], [headDim, 'headdim']] as const) {
      const value = state.get(name);
      if (value !== null) input.value = value;
    }
  }
  const linkedDtype = state.get('dtype');
  if (linkedDtype && dtypes.some((d) => d.value === linkedDtype)) dtype.value = linkedDtype;
  for (const [input, name] of [[context, 'context'], [batch, 'batch']] as const) {
    const value = state.get(name);
    if (value !== null) input.value = value;
  }
  update(false);
  return root;
}
