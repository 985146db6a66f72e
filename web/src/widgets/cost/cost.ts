// cost: what attention costs: the FLOPs of one attention layer from the wasm core's
// attentionCost, for a model width d, query and KV heads, and sequence length T.
//   prefill: projections 2Td(2d + 2d_kv) against QK^T + PV = 4T^2 d, on a log-log
//            chart over T = 128 .. 131072 with the crossover T = d + d_kv marked;
//   a worked table at the chosen T (d = T = 4096: 8Td^2 = 549,755,813,888 and
//            4T^2 d = 274,877,906,944);
//   decode:  one new token against S cached keys: projections constant, attention
//            4Sd growing with S, and the bytes of K and V each step reads.
import '../shared/lessons.css';
import { Cost, CoreError, Flops } from '../../lib/core';
import { el, labelled, numberInput, select, setStatus } from '../../lib/dom';
import { markInvalid, readWhole, stillShowing } from '../../lib/fields';
import { count } from '../../lib/words';
import type { WidgetContext } from '../../lib/widget';
import { bytes, grouped, markUpdated, scientific } from '../shared/lesson-kit';
import { logLog, newLogLogChart } from '../shared/log-log-chart';

interface Inputs { d: number; heads: number; kv: number; T: number; bytes: number }

const defaults: Inputs = { d: 4096, heads: 32, kv: 32, T: 4096, bytes: 2 };
const limits = { d: 1 << 20, heads: 1024, T: 1 << 24 };
const chartDomain: [number, number] = [128, 131072];
// Half-octave steps: 2^7, 2^7.5, ..., 2^17.
const chartTs = Array.from({ length: 21 }, (_, i) => 2 ** (7 + i / 2));
const tableTs = chartTs.filter((_, i) => i % 2 === 0);
const dtypes: [string, string][] = [['4', 'fp32 (4 bytes)'], ['2', 'bf16 / fp16 (2 bytes)'], ['1', 'int8 / fp8 (1 byte)']];

// ---------------------------------------------------------------- validation

type Fields = Record<keyof Inputs, HTMLInputElement | HTMLSelectElement>;

/**
 * The inputs, or the first problem with them and the fields it is about. Besides each
 * field's range, the heads must split d evenly (head_dim = d / n_heads whole) and the KV
 * heads must split the query heads evenly, so that d_kv = head_dim · n_kv_heads and every
 * FLOP and byte count is a whole number.
 */
function readInputs(fields: Fields): { inputs: Inputs } | { error: string; fields: (keyof Inputs)[] } {
  const read = (name: 'd' | 'heads' | 'kv' | 'T', label: string, max: number) => readWhole(fields[name] as HTMLInputElement, label, 1, max);
  const d = read('d', 'The model width d', limits.d);
  if ('error' in d) return { fields: ['d'], error: d.error };
  const heads = read('heads', 'The number of query heads', limits.heads);
  if ('error' in heads) return { fields: ['heads'], error: heads.error };
  const kv = read('kv', 'The number of KV heads', limits.heads);
  if ('error' in kv) return { fields: ['kv'], error: kv.error };
  const T = read('T', 'The length T', limits.T);
  if ('error' in T) return { fields: ['T'], error: T.error };
  if (d.value % heads.value !== 0) {
    const below = Math.floor(d.value / heads.value) * heads.value, above = below + heads.value;
    const examples = below >= heads.value ? `${grouped(below)} or ${grouped(above)}` : `${grouped(above)} or ${grouped(2 * above)}`;
    return {
      fields: ['d', 'heads'],
      error: `The model width d = ${grouped(d.value)} does not split evenly into ${count(heads.value, 'query head')}: each head gets d / n_heads channels, ` +
        `which must be a whole number${d.value < heads.value ? ' of at least 1' : ''}. Make d a multiple of ${heads.value} (e.g. ${examples}), or pick a number of heads that divides it.`,
    };
  }
  if (kv.value > heads.value || heads.value % kv.value !== 0) {
    const divisors = Array.from({ length: heads.value }, (_, i) => i + 1).filter((k) => heads.value % k === 0);
    return {
      fields: ['kv'],
      error: `${count(heads.value, 'query head')} cannot be shared out evenly among ${count(kv.value, 'KV head')}: n_heads must be a multiple of n_kv_heads (here ${divisors.join(', ')}).`,
    };
  }
  return { inputs: { d: d.value, heads: heads.value, kv: kv.value, T: T.value, bytes: Number(fields.bytes.value) } };
}

/** (QKᵀ + PV) ÷ projections, one format wherever it is shown. */
function ratioText(x: number): string {
  if (x >= 1000) return grouped(Math.round(x));
  return x >= 0.001 ? String(Number(x.toPrecision(3))) : scientific(x, 2);
}

// ---------------------------------------------------------------- the widget

export function mountCost(root: HTMLElement, context: WidgetContext): void {
  const { core, state } = context;
  root.classList.add('lesson-widget', 'cost-widget');

  const fields = {
    d: numberInput('number', 1, limits.d, 1, defaults.d),
    heads: numberInput('number', 1, limits.heads, 1, defaults.heads),
    kv: numberInput('number', 1, limits.heads, 1, defaults.kv),
    T: numberInput('number', 1, limits.T, 1, defaults.T),
    bytes: select(dtypes, String(defaults.bytes)),
  };
  for (const [name, node] of Object.entries(fields)) node.dataset.testid = `cost-${name}`;
  // The link's values go into the fields as they are: a bad one shows its message.
  for (const name of ['d', 'heads', 'kv', 'T'] as const) {
    const linked = state.get(name);
    if (linked !== null) fields[name].value = linked;
  }
  if (dtypes.some(([v]) => v === state.get('bytes'))) fields.bytes.value = state.get('bytes')!;

  const status = el('p', { class: 'status', 'data-testid': 'cost-status' });
  const timing = el('p', { class: 'update-time', 'data-testid': 'cost-timing' });
  const prefillChart = newLogLogChart();
  prefillChart.root.dataset.testid = 'cost-chart';
  // Wide tables scroll sideways on a phone; a region with a name and a tab stop lets the keyboard scroll them.
  const scroller = (label: string, testid: string) => el('div', { class: 'scroll-x', tabindex: 0, role: 'region', 'aria-label': label, 'data-testid': testid });
  const prefillTable = scroller('Prefill chart as a table', 'cost-chart-table');
  const worked = scroller('Worked prefill numbers', 'cost-worked');
  const workedTitle = el('h3', { class: 'lesson-subtitle' });
  const prefillNote = el('p', { class: 'lesson-caption' });
  const decodeChart = newLogLogChart();
  decodeChart.root.dataset.testid = 'cost-decode-chart';
  const decodeTable = scroller('Decode chart as a table', 'cost-decode-chart-table');
  const decodeWorked = scroller('Worked decode numbers', 'cost-decode');
  const decodeNote = el('p', { class: 'lesson-caption', 'data-testid': 'cost-memory-bound' });

  root.append(
    el('div', { class: 'controls' },
      labelled('Model width d', fields.d, 'channels in and out'),
      labelled('Query heads', fields.heads),
      labelled('KV heads', fields.kv, 'fewer than query heads: GQA'),
      labelled('Length T (prefill) = S (decode)', fields.T),
      labelled('KV cache type', fields.bytes)),
    el('div', { class: 'status-row' }, status, timing),
    el('section', { class: 'lesson-part', 'aria-labelledby': 'cost-prefill' },
      el('h3', { class: 'lesson-subtitle', id: 'cost-prefill' }, 'Prefill: T queries against T keys, one layer'),
      prefillChart.root,
      el('details', { class: 'chart-table' }, el('summary', {}, 'The chart as a table'), prefillTable),
      prefillNote,
      workedTitle,
      worked),
    el('section', { class: 'lesson-part', 'aria-labelledby': 'cost-decode-title' },
      el('h3', { class: 'lesson-subtitle', id: 'cost-decode-title' }, 'Decode: one new token against S cached keys, one layer'),
      decodeChart.root,
      el('details', { class: 'chart-table' }, el('summary', {}, 'The chart as a table'), decodeTable),
      decodeWorked,
      decodeNote),
  );

  let shown: Inputs | null = null;

  function update(): void {
    const start = performance.now();
    const read = readInputs(fields);
    markInvalid(Object.values(fields), false);
    const kept = () => (shown ? stillShowing([['d', shown.d], ['query heads', shown.heads], ['KV heads', shown.kv], ['T', shown.T]]) : '');
    if ('error' in read) {
      markInvalid(read.fields.map((name) => fields[name]));
      setStatus(status, `${read.error}${kept()}`, 'error');
      root.classList.add('stale');
      return;
    }
    const inputs = read.inputs;
    const cost = (T: number) =>
      core.attentionCost({ d: inputs.d, T, n_heads: inputs.heads, n_kv_heads: inputs.kv, bytes_per_scalar: inputs.bytes });
    let atT: Cost, curve: Cost[];
    try {
      atT = cost(inputs.T);
      curve = chartTs.map(cost);
    } catch (error) {
      setStatus(status, `The core refused these inputs: ${error instanceof CoreError ? error.message : String(error)}.${kept()}`, 'error');
      root.classList.add('stale');
      return;
    }
    root.classList.remove('stale');
    shown = inputs;
    const headDim = inputs.d / inputs.heads; // whole: readInputs checked that the heads divide d
    const dKv = headDim * inputs.kv;
    const crossover = atT.crossover_T;
    const crossCost = cost(crossover);
    setStatus(status,
      `d = ${grouped(inputs.d)}, ${count(inputs.heads, 'query head')}, ${count(inputs.kv, 'KV head')}: each head is d / n_heads = ${grouped(headDim)} wide, ` +
      `so K and V are d_kv = ${grouped(headDim)} · ${inputs.kv} = ${grouped(dKv)} wide${inputs.kv === inputs.heads ? ' (no GQA)' : ' (GQA)'}.`);

    // ---- prefill chart and its table
    const attention = (f: Flops) => f.scores + f.weighted;
    prefillChart.setData(logLog({
      label: `Log-log chart of FLOPs per layer against T from 128 to 131,072. Projections grow like T, from ${scientific(curve[0].prefill.projections)} to ${scientific(curve[20].prefill.projections)}; ` +
        `QKᵀ + PV grows like T², from ${scientific(attention(curve[0].prefill))} to ${scientific(attention(curve[20].prefill))}. They cross at T = ${grouped(crossover)}.`,
      xLabel: 'sequence length T (log scale)',
      yLabel: 'FLOPs per layer (log scale)',
      xDomain: chartDomain,
      series: [
        { name: 'projections Q, K, V, O', className: 'series-projections', points: curve.map((c, i) => [chartTs[i], c.prefill.projections]) },
        { name: 'QKᵀ + PV', className: 'series-attention', points: curve.map((c, i) => [chartTs[i], attention(c.prefill)]) },
      ],
      markers: [{ x: crossover, y: crossCost.prefill.projections, label: `cross at T = ${grouped(crossover)}` }],
      dots: [{ x: inputs.T, y: atT.prefill.projections }, { x: inputs.T, y: attention(atT.prefill) }],
    }));
    prefillTable.replaceChildren(
      dataTable('Prefill FLOPs per layer at each plotted T',
        ['T', 'projections', 'QKᵀ + PV', 'QKᵀ + PV ÷ projections'],
        tableTs.map((T) => {
          const c = curve[chartTs.indexOf(T)];
          return [grouped(T), grouped(c.prefill.projections), grouped(attention(c.prefill)), ratioText(attention(c.prefill) / c.prefill.projections)];
        })),
    );
    prefillNote.textContent = crossover >= chartDomain[0] && crossover <= chartDomain[1]
      ? `Below T = ${grouped(crossover)} the four projections cost more; above it the two T² products do, and the gap widens by 2× for every doubling of T. ` +
        `The open dots mark your T = ${grouped(inputs.T)}.`
      : `Here the lines cross at T = ${grouped(crossover)}, outside the plotted range of 128 to 131,072.`;

    // ---- the worked numbers at the chosen T
    const { d, T } = inputs;
    const p = atT.prefill;
    const noGqa = inputs.kv === inputs.heads;
    workedTitle.textContent = `Worked numbers for d = ${grouped(d)}, T = ${grouped(T)}`;
    worked.replaceChildren(
      el('table', { class: 'data cost-table' },
        el('caption', {}, `One layer, one sequence, prefill. A multiply-add counts as 2 FLOPs; d_kv = ${grouped(dKv)}.`),
        el('thead', {}, el('tr', {}, ...['term and formula', 'FLOPs'].map((h) => el('th', { scope: 'col' }, h)))),
        el('tbody', {},
          costRow('projections Q, K, V, O', noGqa ? '2Td(2d + 2d_kv) = 8Td²' : '2Td(2d + 2d_kv)', p.projections, 'cost-projections'),
          costRow('QKᵀ (all heads)', '2T²d', p.scores, 'cost-scores'),
          costRow('PV (all heads)', '2T²d', p.weighted, 'cost-weighted'),
          costRow('QKᵀ + PV', '4T²d', p.scores + p.weighted, 'cost-attention'),
          el('tr', {}, el('th', { scope: 'row' }, '(QKᵀ + PV) ÷ projections', el('small', { class: 'formula' }, 'T / (d + d_kv)')),
            el('td', { class: 'num', 'data-testid': 'cost-ratio', 'data-value': String((p.scores + p.weighted) / p.projections) }, ratioText((p.scores + p.weighted) / p.projections))),
          el('tr', {}, el('th', { scope: 'row' }, 'crossover length', el('small', { class: 'formula' }, noGqa ? 'T = d + d_kv = 2d' : 'T = d + d_kv')),
            el('td', { class: 'num', 'data-testid': 'cost-crossover', 'data-value': String(crossover) }, grouped(crossover))),
        )),
    );

    // ---- decode
    const s = atT.decode;
    decodeChart.setData(logLog({
      label: `Log-log chart of per-token decode FLOPs per layer against the cache length S from 128 to 131,072. Projections stay at ${grouped(curve[0].decode.projections)}; ` +
        `attention grows like S, from ${scientific(attention(curve[0].decode))} to ${scientific(attention(curve[20].decode))}, passing the projections at S = ${grouped(crossover)}.`,
      xLabel: 'cache length S (log scale)',
      yLabel: 'FLOPs per new token, per layer',
      xDomain: chartDomain,
      series: [
        { name: 'projections (constant)', className: 'series-projections', points: curve.map((c, i) => [chartTs[i], c.decode.projections]) },
        { name: 'q·K + p·V', className: 'series-attention', points: curve.map((c, i) => [chartTs[i], attention(c.decode)]) },
      ],
      markers: [{ x: crossover, y: crossCost.decode.projections, label: `equal at S = ${grouped(crossover)}` }],
      dots: [{ x: T, y: s.projections }, { x: T, y: attention(s) }],
    }));
    const dtype = dtypes.find(([v]) => Number(v) === inputs.bytes)![1];
    decodeTable.replaceChildren(
      dataTable(`Decode cost per new token and layer at each plotted S (${dtype} cache)`,
        ['S', 'projections', 'q·K + p·V', 'K and V bytes read'],
        tableTs.map((S) => {
          const c = curve[chartTs.indexOf(S)];
          return [grouped(S), grouped(c.decode.projections), grouped(attention(c.decode)), `${grouped(c.decode_cache_bytes)} (${bytes(c.decode_cache_bytes)})`];
        })),
    );
    const intensity = attention(s) / atT.decode_cache_bytes;
    decodeWorked.replaceChildren(
      el('table', { class: 'data cost-table' },
        el('caption', {}, `One new token with S = ${grouped(T)} cached positions, one layer, ${dtype} cache.`),
        el('thead', {}, el('tr', {}, ...['term and formula', 'value'].map((h) => el('th', { scope: 'col' }, h)))),
        el('tbody', {},
          costRow('projections, FLOPs', '2d(2d + 2d_kv)', s.projections, 'cost-decode-projections'),
          costRow('q·K + p·V, FLOPs', '4Sd', attention(s), 'cost-decode-attention'),
          costRow('K and V read, bytes', `2·S·d_kv·${inputs.bytes}`, atT.decode_cache_bytes, 'cost-decode-bytes', bytes(atT.decode_cache_bytes)),
          el('tr', {}, el('th', { scope: 'row' }, 'attention FLOPs per byte read', el('small', { class: 'formula' }, `4Sd ÷ (2S·d_kv·${inputs.bytes})`)),
            el('td', { class: 'num', 'data-testid': 'cost-intensity', 'data-value': String(intensity) }, formatIntensity(intensity))),
        )),
    );
    decodeNote.textContent =
      `Each decode step reads every cached key and value once, ${bytes(atT.decode_cache_bytes)} in this layer, and does only ${formatIntensity(intensity)} FLOP${intensity === 1 ? '' : 's'} of attention per byte it reads, ` +
      `however long the cache is. A current GPU does well over a hundred FLOPs in the time it loads one byte from its memory, so the step waits on memory, not on arithmetic: decode is memory bound, ` +
      `and a smaller cache (fewer KV heads, a narrower type) makes it faster directly. Prefill reads the same bytes once for all T queries, so its FLOPs per byte grow with T.`;

    markUpdated(root, timing, performance.now() - start, ` (${chartTs.length + 2} core calls)`);
    state.set({ d: inputs.d, heads: inputs.heads, kv: inputs.kv, T: inputs.T, bytes: inputs.bytes });
  }

  for (const node of Object.values(fields)) node.addEventListener(node instanceof HTMLSelectElement ? 'change' : 'input', update);
  update();
}

function formatIntensity(x: number): string {
  return x >= 10 ? x.toFixed(0) : x.toFixed(2).replace(/\.?0+$/, '');
}

/** A row: the term with its formula under it, the exact count with its rounded size under it. */
function costRow(term: string, formula: string, value: number, testid: string, approx = scientific(value)): HTMLTableRowElement {
  return el('tr', {},
    el('th', { scope: 'row' }, term, el('small', { class: 'formula' }, formula)),
    el('td', { class: 'num' }, el('span', { 'data-testid': testid, 'data-value': String(value) }, grouped(value)), el('small', { class: 'approx' }, `≈ ${approx}`)));
}

function dataTable(caption: string, head: string[], rows: string[][]): HTMLTableElement {
  return el('table', { class: 'data cost-table' },
    el('caption', {}, caption),
    el('thead', {}, el('tr', {}, ...head.map((h) => el('th', { scope: 'col' }, h)))),
    el('tbody', {}, ...rows.map(([first, ...rest]) => el('tr', {}, el('th', { scope: 'row' }, first), ...rest.map((c) => el('td', { class: 'num' }, c))))));
}
