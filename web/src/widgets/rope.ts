// W4, RoPE in three parts, every number from the wasm core:
//   a. the angle each channel pair turns at each position (core ropeAngles, head_dim 8,
//      theta 10000, positions 0..31), and each pair's vector at a chosen position as a
//      clock hand (core ropeRotate);
//   b. q and k rotated to every pair of positions (m, n): their dot product depends on
//      m - n alone, so each diagonal of the grid holds one value (core ropeScores);
//   c. which channels pair up under half_split and interleaved, and what running the
//      tiny model's own (half_split) weights with interleaved pairing does to a head's
//      probabilities (core forward, twice).
import './lessons.css';
import { call, CoreError, ForwardResult, ModelConfig } from '../lib/core';
import { diverging, sequential } from '../lib/colormap';
import { tabulated } from '../lib/color-table';
import { el, formatNumber, labelled, numberInput, select, setStatus, svgEl } from '../lib/dom';
import { Heatmap, HeatmapData } from '../lib/heatmap';
import type { WidgetContext } from '../lib/widget';
import { markUpdated, urlWriter } from './lesson-kit';

const headDim = 8;
const theta = 10000;
const positionCount = 32;                 // positions 0..31 in parts a and b
const positions = Array.from({ length: positionCount }, (_, p) => p);
const pairs = headDim / 2;
const defaultIds = [3, 1, 4, 1, 5, 9, 2, 6];
const maxTokens = 32;
const twoPi = 2 * Math.PI;

type Pairing = 'half_split' | 'interleaved';
const pairingName: Record<Pairing, string> = { half_split: 'half split', interleaved: 'interleaved' };

interface Run {
  ids: number[];
  own: ForwardResult;          // the model's pairing (half_split)
  swapped: ForwardResult;      // the same weights with interleaved pairing
}

// ---------------------------------------------------------------- input parsing

function parseIds(text: string, vocabSize: number): { ids: number[] } | { error: string } {
  const parts = text.split(/[\s,]+/).filter((part) => part !== '');
  if (parts.length < 2) return { error: 'Type at least two token ids, e.g. 3,1,4: position 0 alone cannot show a difference.' };
  if (parts.length > maxTokens) return { error: `${parts.length} ids given; this widget takes at most ${maxTokens}.` };
  const ids: number[] = [];
  for (const [t, part] of parts.entries()) {
    if (!/^\d+$/.test(part) || Number(part) >= vocabSize)
      return { error: `"${part}" at position ${t} is not a token id: ids are whole numbers from 0 to ${vocabSize - 1}.` };
    ids.push(Number(part));
  }
  return { ids };
}

function parseVector(text: string, name: string): { vector: number[] } | { error: string } {
  const parts = text.split(/[\s,]+/).filter((part) => part !== '');
  const vector = parts.map(Number);
  if (vector.length !== headDim || !vector.every(Number.isFinite))
    return { error: `${name} needs ${headDim} numbers separated by commas (got ${parts.length}${vector.every(Number.isFinite) ? '' : ', not all numbers'}).` };
  return { vector };
}

const vectorText = (v: number[]) => v.map((x) => Number(x.toFixed(3))).join(', ');

// ---------------------------------------------------------------- the widget

export function mountRope(root: HTMLElement, context: WidgetContext): void {
  const { core, state } = context;
  const config = call<ModelConfig>(core, 'config', 'tiny');
  const saveState = urlWriter(state);
  root.classList.add('lesson-widget', 'rope-widget');
  const group = config.n_heads / config.n_kv_heads;

  // ---- the model run shared by parts b and c
  const tokensInput = el('input', { type: 'text', class: 'tokens-input', inputmode: 'numeric', autocomplete: 'off', spellcheck: 'false', 'data-testid': 'w4-tokens' });
  const layerSelect = select(Array.from({ length: config.n_layers }, (_, l) => [String(l), `layer ${l}`]), '0');
  const headSelect = select(Array.from({ length: config.n_heads }, (_, h) => [String(h), `head ${h} → KV head ${Math.floor(h / group)}`]), '0');
  layerSelect.dataset.testid = 'w4-layer';
  headSelect.dataset.testid = 'w4-head';
  const status = el('p', { class: 'status', 'data-testid': 'w4-status' });
  const timing = el('p', { class: 'update-time', 'data-testid': 'w4-timing' });

  // ---- part a: angles and clocks
  const showSelect = select([['cos', 'cos(angle)'], ['mod', 'angle mod 2π']], state.get('show') === 'mod' ? 'mod' : 'cos');
  showSelect.dataset.testid = 'w4-show';
  const clockInput = numberInput('range', 0, positionCount - 1, 1, state.getNumber('p', 5, 0, positionCount - 1));
  clockInput.dataset.testid = 'w4-clock-position';
  const clockOutput = el('output', { class: 'scale-output' });
  const angleMap = new Heatmap({ title: 'RoPE angle per channel pair and position', rowAxis: 'pair', colAxis: 'position', maxCellPx: 28 });
  angleMap.root.dataset.testid = 'w4-angles';
  const clocks = el('div', { class: 'rope-clocks', 'data-testid': 'w4-clocks' });
  const anglesNote = el('p', { class: 'lesson-caption' });

  // ---- part b: the offset demonstration
  const qInput = el('input', { type: 'text', class: 'vector-input', autocomplete: 'off', spellcheck: 'false', 'data-testid': 'w4-q' });
  const kInput = el('input', { type: 'text', class: 'vector-input', autocomplete: 'off', spellcheck: 'false', 'data-testid': 'w4-k' });
  const modelVectors = el('button', { type: 'button', class: 'secondary', 'data-testid': 'w4-use-model' }, "Use the model's q and k");
  const vectorSource = el('p', { class: 'lesson-caption' });
  const offsetMap = new Heatmap({ title: 'q·k after RoPE for query position m and key position n', rowAxis: 'query position m', colAxis: 'key position n', maxCellPx: 15 });
  offsetMap.root.dataset.testid = 'w4-offsets';
  const offsetReadout = el('p', { class: 'lesson-readout', 'data-testid': 'w4-deviation' });

  // ---- part c: pairing
  const pairingDiagram = el('div', { class: 'pairing-diagrams', 'data-testid': 'w4-pairing-diagram' });
  const ownMap = new Heatmap({ title: 'Probabilities, half split (the model\'s own)', rowAxis: 'query', colAxis: 'key', maxCellPx: 28 });
  const swappedMap = new Heatmap({ title: 'Probabilities, interleaved (mismatched)', rowAxis: 'query', colAxis: 'key', maxCellPx: 28 });
  const diffMap = new Heatmap({ title: 'Interleaved minus half split', rowAxis: 'query', colAxis: 'key', maxCellPx: 28 });
  ownMap.root.dataset.testid = 'w4-own';
  swappedMap.root.dataset.testid = 'w4-swapped';
  diffMap.root.dataset.testid = 'w4-difference';
  const pairingReadout = el('p', { class: 'lesson-readout', 'data-testid': 'w4-pairing-readout' });

  const clockControl = labelled('Clock position p', clockInput);
  clockInput.after(clockOutput);
  clockOutput.setAttribute('for', clockInput.id);
  // Put together off the page and attached after the first draw: a heatmap that is
  // drawn while attached reads its width and forces a layout of the whole chapter.
  const content = [
    el('div', { class: 'controls' },
      labelled('Token ids (parts b and c)', tokensInput, `2 to ${maxTokens} ids from 0 to ${config.vocab_size - 1}`),
      labelled('Layer', layerSelect),
      labelled('Query head', headSelect)),
    el('div', { class: 'status-row' }, status, timing),

    el('section', { class: 'lesson-part', 'aria-labelledby': 'w4-part-a' },
      el('h3', { class: 'lesson-subtitle', id: 'w4-part-a' }, 'a. How far each pair turns'),
      el('div', { class: 'controls' }, labelled('Colour shows', showSelect), clockControl),
      el('div', { class: 'no-mask' }, angleMap.root),
      clocks,
      anglesNote),

    el('section', { class: 'lesson-part', 'aria-labelledby': 'w4-part-b' },
      el('h3', { class: 'lesson-subtitle', id: 'w4-part-b' }, 'b. The score sees only the offset'),
      el('div', { class: 'controls' },
        labelled('q before RoPE (8 numbers)', qInput),
        labelled('k before RoPE (8 numbers)', kInput),
        el('div', { class: 'control buttons' }, modelVectors)),
      vectorSource,
      el('div', { class: 'no-mask' }, offsetMap.root),
      offsetReadout),

    el('section', { class: 'lesson-part', 'aria-labelledby': 'w4-part-c' },
      el('h3', { class: 'lesson-subtitle', id: 'w4-part-c' }, 'c. Half split or interleaved'),
      pairingDiagram,
      el('div', { class: 'panels compare-three' },
        el('div', {}, el('p', { class: 'panel-label' }, 'half split (the model\'s own)'), ownMap.root),
        el('div', {}, el('p', { class: 'panel-label' }, 'interleaved (mismatched)'), swappedMap.root),
        el('div', {}, el('p', { class: 'panel-label' }, 'interleaved − half split'), diffMap.root)),
      pairingReadout),
  ];

  // ---------------------------------------------------------------- part a
  const angles = call<{ angles: number[][] }>(core, 'ropeAngles', { head_dim: headDim, theta, positions }).angles; // [P][pairs]
  const unit = Array.from({ length: headDim }, (_, c) => (c < pairs ? 1 : 0)); // (1, 0) in every half-split pair

  function renderAngles(): void {
    const mode = showSelect.value as 'cos' | 'mod';
    const value = (i: number, p: number) => (mode === 'cos' ? Math.cos(angles[p][i]) : angles[p][i] % twoPi);
    const data: HeatmapData = {
      rows: pairs,
      cols: positionCount,
      value,
      allowed: () => true,
      rowLabel: (i) => String(i),
      colLabel: (p) => String(p),
      scale: mode === 'cos' ? tabulated(diverging(1), -1, 1) : sequential(0, twoPi),
      domain: mode === 'cos' ? [-1, 1] : [0, twoPi],
      describe: (i, p) => {
        const a = angles[p][i];
        return `pair ${i} (channels ${i} and ${i + pairs}), position ${p}: angle ${p}·${theta}^(−${i}/${pairs}) = ${formatNumber(a, 6)} rad; ` +
          `mod 2π = ${formatNumber(a % twoPi, 4)} rad (${formatNumber(((a % twoPi) * 180) / Math.PI, 1)}°); cos = ${formatNumber(Math.cos(a), 4)}`;
      },
    };
    angleMap.setTitle(`RoPE angle per channel pair and position, shown as ${mode === 'cos' ? 'cos(angle)' : 'angle mod 2π'}`);
    angleMap.setData(data);
  }

  function renderClocks(): void {
    const p = Number(clockInput.value);
    clockOutput.textContent = `p = ${p}`;
    const rotated = call<{ rotated: number[][] }>(core, 'ropeRotate', { vector: unit, positions: [p], theta, pairing: 'half_split' }).rotated[0];
    clocks.replaceChildren(
      ...Array.from({ length: pairs }, (_, i) => {
        const x = rotated[i], y = rotated[i + pairs], a = angles[p][i];
        return clock(i, x, y, a, p);
      }),
    );
    anglesNote.textContent =
      `Pair 0 turns 1 radian per position and goes round every ${formatNumber(twoPi, 2)} positions; pair ${pairs - 1} turns ${formatNumber(angles[1][pairs - 1], 4)} rad per position, ` +
      `so over these ${positionCount} positions it moves only ${formatNumber(angles[positionCount - 1][pairs - 1], 3)} rad. ` +
      `Each clock's hand is the core rotating (1, 0) in that pair to position ${p}; the dashed hand is position 0.`;
  }

  // ---------------------------------------------------------------- part b
  let run: Run | null = null;
  let custom = { q: state.get('q'), k: state.get('k') };
  let qVector: number[] = [], kVector: number[] = [];

  function modelVectorsFor(r: Run): { q: number[]; k: number[] } {
    const layer = r.own.layers![Number(layerSelect.value)], h = Number(headSelect.value), T = r.ids.length;
    return { q: layer.q[0][h][T - 1], k: layer.k[0][Math.floor(h / group)][0] };
  }

  function chooseVectors(): boolean {
    const modelPair = run ? modelVectorsFor(run) : null;
    if (custom.q === null && custom.k === null && modelPair) {
      qVector = modelPair.q;
      kVector = modelPair.k;
      qInput.value = vectorText(qVector);
      kInput.value = vectorText(kVector);
      qInput.removeAttribute('aria-invalid');
      kInput.removeAttribute('aria-invalid');
      vectorSource.textContent =
        `q is the query of the last token (position ${run!.ids.length - 1}) and k the key of the first, both before RoPE, from layer ${layerSelect.value}, ` +
        `head ${headSelect.value} (KV head ${Math.floor(Number(headSelect.value) / group)}) of the run below. Edit either to try your own.`;
      return true;
    }
    for (const [name, input] of [['q', qInput], ['k', kInput]] as const) {
      const parsed = parseVector(input.value, name);
      if ('error' in parsed) {
        input.setAttribute('aria-invalid', 'true');
        setStatus(status, `${parsed.error} Still showing the last good vectors.`, 'error');
        return false;
      }
      input.removeAttribute('aria-invalid');
      if (name === 'q') qVector = parsed.vector;
      else kVector = parsed.vector;
    }
    vectorSource.textContent = 'Your own q and k, before RoPE. "Use the model\'s q and k" goes back to the tiny model\'s.';
    return true;
  }

  function renderOffsets(): void {
    // q rotated to every position m, dotted with k rotated to every position n: [P][P].
    const scores = call<{ scores: number[][] }>(core, 'ropeScores', { q: qVector, k: kVector, positions, theta, pairing: 'half_split' }).scores;

    let spread = 0, worst = 0, lo = Infinity, hi = -Infinity;
    for (let offset = -(positionCount - 1); offset < positionCount; offset++) {
      let min = Infinity, max = -Infinity;
      for (let m = Math.max(0, offset); m < Math.min(positionCount, positionCount + offset); m++) {
        const s = scores[m][m - offset];
        min = Math.min(min, s);
        max = Math.max(max, s);
      }
      if (max - min > spread) [spread, worst] = [max - min, offset];
      lo = Math.min(lo, min);
      hi = Math.max(hi, max);
    }
    const limit = Math.max(Math.abs(lo), Math.abs(hi)) || 1;
    const plain = qVector.reduce((sum, x, d) => sum + x * kVector[d], 0);
    offsetMap.setData({
      rows: positionCount,
      cols: positionCount,
      value: (m, n) => scores[m][n],
      allowed: () => true,
      rowLabel: (m) => String(m),
      colLabel: (n) => String(n),
      scale: tabulated(diverging(limit), -limit, limit),
      domain: [-limit, limit],
      describe: (m, n) => `query at m = ${m}, key at n = ${n}, offset m − n = ${m - n}: q·k after RoPE = ${formatNumber(scores[m][n], 6)}`,
    });
    const example = Math.min(7, positionCount - 1);
    offsetReadout.dataset.value = String(spread);
    offsetReadout.dataset.offset = String(worst);
    offsetReadout.textContent =
      `Along every diagonal (one offset m − n, ${2 * positionCount - 1} of them) the scores agree to ${spread === 0 ? '0' : spread.toExponential(1)} at most ` +
      `(largest spread at offset ${worst}), while across the grid they range from ${formatNumber(lo, 3)} to ${formatNumber(hi, 3)}. ` +
      `For example s(${example}, 0) = ${formatNumber(scores[example][0], 6)} and s(${positionCount - 1}, ${positionCount - 1 - example}) = ${formatNumber(scores[positionCount - 1][positionCount - 1 - example], 6)}. ` +
      `Without RoPE every cell would be q·k = ${formatNumber(plain, 4)}. The upper triangle (keys after the query) is masked in a causal model; it is shown because the identity holds there too.`;
  }

  // ---------------------------------------------------------------- part c
  // Which channel turns with which, found by asking the core: rotate the unit vector e_c
  // to position 1 and see which other channel it leaks into.
  function partners(pairing: Pairing): number[] {
    return Array.from({ length: headDim }, (_, c) => {
      const e = Array.from({ length: headDim }, (_, d) => (d === c ? 1 : 0));
      const r = call<{ rotated: number[][] }>(core, 'ropeRotate', { vector: e, positions: [1], theta, pairing }).rotated[0];
      return r.findIndex((x, d) => d !== c && Math.abs(x) > 1e-12);
    });
  }
  const partnerOf: Record<Pairing, number[]> = { half_split: partners('half_split'), interleaved: partners('interleaved') };
  pairingDiagram.replaceChildren(...(['half_split', 'interleaved'] as Pairing[]).map((p) => pairingFigure(p, partnerOf[p])));

  function renderPairing(r: Run): void {
    const L = Number(layerSelect.value), h = Number(headSelect.value), T = r.ids.length;
    const own = r.own.layers![L].probabilities[0][h], swapped = r.swapped.layers![L].probabilities[0][h]; // [T][T]
    const causal = (row: number, col: number) => col <= row;
    const rowMax: number[] = [];
    let largest = { value: 0, row: 0, col: 0 };
    for (let row = 0; row < T; row++) {
      let m = 0;
      for (let col = 0; col <= row; col++) {
        const d = swapped[row][col] - own[row][col];
        m = Math.max(m, Math.abs(d));
        if (Math.abs(d) > Math.abs(largest.value)) largest = { value: d, row, col };
      }
      rowMax.push(m);
    }
    const probability = (p: number[][], name: string): HeatmapData => ({
      rows: T, cols: T, value: (a, b) => p[a][b], allowed: causal,
      rowLabel: String, colLabel: String, scale: sequential(0, 1), domain: [0, 1],
      describe: (a, b) => (causal(a, b) ? `${name}, query ${a} → key ${b}: p = ${formatNumber(p[a][b])}` : `query ${a} → key ${b}: masked (key after the query)`),
    });
    const limit = Math.abs(largest.value) || 1e-9;
    ownMap.setTitle(`Layer ${L}, head ${h}: probabilities with half split pairing (the model's own)`);
    ownMap.setData(probability(own, 'half split'));
    swappedMap.setTitle(`Layer ${L}, head ${h}: probabilities with interleaved pairing (mismatched)`);
    swappedMap.setData(probability(swapped, 'interleaved'));
    diffMap.setTitle(`Layer ${L}, head ${h}: interleaved minus half split`);
    diffMap.setData({
      rows: T, cols: T, value: (a, b) => swapped[a][b] - own[a][b], allowed: causal,
      rowLabel: String, colLabel: String, scale: tabulated(diverging(limit), -limit, limit), domain: [-limit, limit],
      describe: (a, b) => causal(a, b)
        ? `query ${a} → key ${b}: ${formatNumber(swapped[a][b])} − ${formatNumber(own[a][b])} = ${signed(swapped[a][b] - own[a][b])}`
        : `query ${a} → key ${b}: masked in both`,
    });

    // Position 0 is not rotated at all, so its q and k after RoPE agree exactly.
    const qr0 = maxAbsDiff(r.own.layers![L].q_rope[0][h][0], r.swapped.layers![L].q_rope[0][h][0]);
    const kr0 = maxAbsDiff(r.own.layers![L].k_rope[0][Math.floor(h / group)][0], r.swapped.layers![L].k_rope[0][Math.floor(h / group)][0]);
    const qr1 = maxAbsDiff(r.own.layers![L].q_rope[0][h][1], r.swapped.layers![L].q_rope[0][h][1]);
    pairingReadout.dataset.rowMax = JSON.stringify(rowMax);
    pairingReadout.dataset.max = String(Math.abs(largest.value));
    const exact = (x: number) => (x === 0 ? 'exactly 0' : formatNumber(x));
    pairingReadout.textContent =
      `Largest |difference| = ${formatNumber(Math.abs(largest.value))} (query ${largest.row}, key ${largest.col}). ` +
      `Row 0 differs by ${exact(rowMax[0])}: at position 0 every angle is 0, so neither pairing rotates anything ` +
      `(q and k after RoPE at position 0 differ by ${exact(Math.max(qr0, kr0))}; at position 1 q already differs by ${formatNumber(qr1)}). ` +
      `From row 1 on the mismatched pairing turns the wrong channels together and the weights move, by up to ${formatNumber(Math.max(...rowMax.slice(1)))} in a row. ` +
      `Blue cells (positive) gained weight under the mismatch, red cells (negative) lost it.`;
  }

  // ---------------------------------------------------------------- updates
  function runModel(): boolean {
    const parsed = parseIds(tokensInput.value, config.vocab_size);
    if ('error' in parsed) {
      tokensInput.setAttribute('aria-invalid', 'true');
      setStatus(status, `${parsed.error}${run ? ` Still showing ids ${run.ids.join(', ')}.` : ''}`, 'error');
      return false;
    }
    try {
      const tokens = [parsed.ids];
      run = {
        ids: parsed.ids,
        // Only the fields the widget reads: serialising every intermediate costs more than the pass.
        own: call<ForwardResult>(core, 'forward', { tokens, capture: ['q', 'k', 'q_rope', 'k_rope', 'probabilities'] }),
        swapped: call<ForwardResult>(core, 'forward', { tokens, capture: ['q_rope', 'k_rope', 'probabilities'], rope_pairing: 'interleaved' }),
      };
    } catch (error) {
      tokensInput.setAttribute('aria-invalid', 'true');
      setStatus(status, `The core refused these ids: ${error instanceof CoreError ? error.message : String(error)}`, 'error');
      return false;
    }
    tokensInput.removeAttribute('aria-invalid');
    setStatus(status, `The tiny model (pairing ${pairingName[config.rope_pairing]}) ran on ids ${run.ids.join(', ')}, once as trained and once with interleaved pairing.`);
    return true;
  }

  /** Runs `body`, times it, and saves the state. */
  function timed(body: () => void): void {
    const start = performance.now();
    try {
      body();
    } catch (error) {
      setStatus(status, `The core refused this: ${error instanceof CoreError ? error.message : String(error)}`, 'error');
      return;
    }
    markUpdated(root, timing, performance.now() - start);
    saveState({
      tokens: run ? run.ids.join(',') : null, layer: layerSelect.value, head: headSelect.value,
      show: showSelect.value, p: clockInput.value, q: custom.q, k: custom.k,
    });
  }

  tokensInput.addEventListener('input', () => timed(() => {
    if (!runModel()) return;
    if (chooseVectors()) renderOffsets();
    renderPairing(run!);
  }));
  for (const node of [layerSelect, headSelect])
    node.addEventListener('change', () => timed(() => {
      if (!run) return;
      if (custom.q === null && custom.k === null && chooseVectors()) renderOffsets();
      renderPairing(run);
    }));
  showSelect.addEventListener('change', () => timed(renderAngles));
  clockInput.addEventListener('input', () => timed(renderClocks));
  for (const [name, input] of [['q', qInput], ['k', kInput]] as const)
    input.addEventListener('input', () => timed(() => {
      custom = { q: qInput.value, k: kInput.value };
      if (chooseVectors()) {
        setStatus(status, `Showing your own ${name === 'q' ? 'q' : 'k'}; the model run is unchanged.`);
        renderOffsets();
      }
      void name;
    }));
  modelVectors.addEventListener('click', () => timed(() => {
    custom = { q: null, k: null };
    if (chooseVectors()) renderOffsets();
  }));

  // ---- first draw, from the link where it is usable
  const linkedTokens = state.get('tokens');
  const fromLink = linkedTokens === null ? null : parseIds(linkedTokens, config.vocab_size);
  tokensInput.value = (fromLink && 'ids' in fromLink ? fromLink.ids : defaultIds).join(',');
  layerSelect.value = String(state.getNumber('layer', 0, 0, config.n_layers - 1));
  headSelect.value = String(state.getNumber('head', 0, 0, config.n_heads - 1));
  if (custom.q !== null || custom.k !== null) {
    qInput.value = custom.q ?? '';
    kInput.value = custom.k ?? '';
  }
  const start = performance.now();
  renderAngles();
  renderClocks();
  if (!runModel()) throw new Error(status.textContent ?? 'the model did not run');
  if (!chooseVectors()) {
    // The link's vectors were not usable: fall back to the model's.
    custom = { q: null, k: null };
    chooseVectors();
  }
  renderOffsets();
  renderPairing(run!);
  root.append(...content);
  markUpdated(root, timing, performance.now() - start);
  if (fromLink && 'error' in fromLink) setStatus(status, `The link's token ids were not usable (${fromLink.error}) Showing the default ids instead.`);
}

// ---------------------------------------------------------------- drawings


/** Pair i's vector at position p as a clock hand, with position 0 dashed and the turned arc. */
function clock(i: number, x: number, y: number, angle: number, p: number): HTMLElement {
  const r = 34, c = 40;
  const svg = svgEl('svg', { viewBox: '0 0 80 80', width: 68, height: 68, class: 'rope-clock', role: 'img',
    'aria-label': `pair ${i} at position ${p}: (1, 0) turned by ${formatNumber(angle, 4)} rad to (${formatNumber(x, 3)}, ${formatNumber(y, 3)})` });
  const turned = angle % (2 * Math.PI);
  const large = turned > Math.PI ? 1 : 0;
  const arcR = 14;
  svg.append(
    svgEl('circle', { cx: c, cy: c, r, class: 'clock-face' }),
    svgEl('line', { x1: c, y1: c, x2: c + r, y2: c, class: 'clock-start' }),
  );
  if (turned > 1e-9)
    svg.append(svgEl('path', { class: 'clock-arc', d: `M${c + arcR} ${c} A${arcR} ${arcR} 0 ${large} 0 ${c + arcR * Math.cos(turned)} ${c - arcR * Math.sin(turned)}` }));
  svg.append(
    svgEl('line', { x1: c, y1: c, x2: c + r * x, y2: c - r * y, class: 'clock-hand' }),
    svgEl('circle', { cx: c + r * x, cy: c - r * y, r: 3, class: 'clock-tip' }),
  );
  return el('figure', { class: 'rope-clock-box' }, svg as unknown as HTMLElement,
    el('figcaption', {}, el('strong', {}, `pair ${i}`), el('br'), `ch ${i}, ${i + 4}`, el('br'), `${formatNumber(angle, 3)} rad`, el('br'), `${formatNumber(angle / (2 * Math.PI), 4)} turns`));
}

/** Channels 0..7 as boxes, each pair joined by a labelled arc. */
function pairingFigure(pairing: Pairing, partner: number[]): HTMLElement {
  const box = 30, gap = 6, left = 6, top = 58, width = left * 2 + headDim * box + (headDim - 1) * gap;
  const cx = (ch: number) => left + ch * (box + gap) + box / 2;
  const pairList: [number, number][] = [];
  for (let ch = 0; ch < headDim; ch++) if (partner[ch] > ch) pairList.push([ch, partner[ch]]);
  const title = pairing === 'half_split' ? 'half split: Hugging Face Llama, this model' : 'interleaved: Meta\'s original code';
  const svg = svgEl('svg', { viewBox: `0 0 ${width} ${top + box + 6}`, class: 'pairing-svg', role: 'img',
    'aria-label': `${title}. Pairs: ${pairList.map(([a, b]) => `(${a}, ${b})`).join(', ')}` });
  for (const [n, [a, b]] of pairList.entries()) {
    // Half-split arcs all span four boxes: stagger their heights so they stay apart.
    const x1 = cx(a), x2 = cx(b), height = pairing === 'half_split' ? 18 + 10 * n : 22;
    svg.append(svgEl('path', { d: `M${x1} ${top} C${x1} ${top - height} ${x2} ${top - height} ${x2} ${top}`, class: `pair-arc pair-arc-${n}` }));
    svg.append(svgEl('text', { x: (x1 + x2) / 2, y: top - height * 0.75 - 2, 'text-anchor': 'middle', class: 'pair-arc-label' }, `${n}`));
  }
  for (let ch = 0; ch < headDim; ch++) {
    const x = left + ch * (box + gap);
    svg.append(svgEl('rect', { x, y: top, width: box, height: box, rx: 3, class: 'channel-box' }));
    svg.append(svgEl('text', { x: x + box / 2, y: top + box / 2 + 4, 'text-anchor': 'middle', class: 'channel-label' }, String(ch)));
  }
  return el('figure', { class: 'pairing-figure' }, svg as unknown as HTMLElement,
    el('figcaption', {}, el('strong', {}, title), el('br'), `pairs ${pairList.map(([a, b]) => `(${a}, ${b})`).join(' ')}; arc labels number the pairs, pair i turns by p·θ^(−i/4)`));
}

function maxAbsDiff(a: number[], b: number[]): number {
  return a.reduce((m, x, d) => Math.max(m, Math.abs(x - b[d])), 0);
}

function signed(x: number): string {
  return (x > 0 ? '+' : '') + formatNumber(x);
}
