// The chapters' first screen: one head of the Shakespeare model this project
// trained (web/public/models/shakespeare/), drawn over the characters of a line the
// reader can edit. Each character is joined by an arc to every earlier character it
// gives at least 5% of its attention, and by a loop to itself (each as opaque as the
// weight); the character under the pointer or the keyboard's cursor shades the
// characters it reads. Only layer 0 is computed, from its four tensors
// (lib/first-layer-core.ts): that is all this head's probabilities depend on.
//
// The host says which head and what to measure:
//   <figure class="widget" data-widget="first-screen" data-head="3" data-pattern="previous" data-text="...">
//   data-pattern: "previous" (the weight on the character just before) or "self" (on itself)
import { el, labelled, observeWidth, svgEl, setStatus } from '../../lib/dom';
import { markInvalid } from '../../lib/fields';
import { FirstLayer, FirstLayerAttention, openFirstLayer } from '../../lib/first-layer-core';
import type { UrlState } from '../../lib/url-state';

type Pattern = 'previous' | 'self';

const bosCells = 3;      // BOS is drawn as a small "BOS" three cells wide
const shown = 0.05;      // the least weight an arc is drawn for

/** The drawing's measures for T positions in `width` px: one line where the characters fit at 13 px or more. */
function measures(width: number, T: number) {
  const cell = Math.max(13, Math.min(24, Math.floor(width / (T - 1 + bosCells))));  // px per character
  const band = Math.round(cell * 1.6);                                               // px above a line for its arcs
  return { cell, band, lineHeight: band + cell + 8, perLine: Math.max(8, Math.floor(width / cell)), font: Math.round(cell * 0.8) };
}

/** The weight each query t >= 1 gives the pattern's key (t - 1 or t), averaged. */
function patternScore(a: FirstLayerAttention, head: number, pattern: Pattern): number {
  let sum = 0;
  for (let t = 1; t < a.T; t += 1) sum += a.probabilities[(head * a.T + t) * a.T + (pattern === 'previous' ? t - 1 : t)];
  return a.T > 1 ? sum / (a.T - 1) : NaN;
}

const percent = (p: number) => `${Math.round(p * 100)}%`;
const quoted = (c: string) => (c === '\n' ? 'the line break' : c === ' ' ? 'a space' : `“${c}”`);

export async function mountFirstScreen(root: HTMLElement, { state }: { state: UrlState }): Promise<void> {
  const host = root.closest<HTMLElement>('[data-widget]')!;
  const head = Number(host.dataset.head ?? 0);
  const pattern: Pattern = host.dataset.pattern === 'self' ? 'self' : 'previous';
  const model: FirstLayer = await openFirstLayer();

  const input = el('input', { type: 'text', spellcheck: 'false', autocomplete: 'off', 'data-testid': 'first-screen-text' });
  input.value = state.get('text') ?? host.dataset.text ?? '';
  const status = el('p', { class: 'status', 'data-testid': 'first-screen-status' });
  const summary = el('p', { class: 'first-screen-summary', 'data-testid': 'first-screen-summary' });
  const readout = el('p', { class: 'first-screen-readout', 'aria-live': 'polite', 'data-testid': 'first-screen-readout' });
  const svg = svgEl('svg', { class: 'first-screen-drawing', role: 'img', tabindex: '0', 'data-testid': 'first-screen-drawing' });
  root.append(
    el('div', { class: 'controls' }, labelled('A line of Shakespeare (edit it)', input, `at most ${model.maxCharacters} characters`)),
    svg, readout, summary, status);

  let attention: FirstLayerAttention | null = null;
  let selected = 0;  // the query whose row is shaded: a position 1..T-1
  let width = 0;

  // Where character position t (0 = BOS) is drawn: x of its cell's left edge, and its line.
  const layout = (T: number) => {
    const m = measures(width, T);
    const place: { x: number; line: number }[] = [];
    let x = 0, line = 0;
    for (let t = 0; t < T; t += 1) {
      const w = t === 0 ? bosCells : 1;
      if (x + w > m.perLine) (x = 0), (line += 1);
      place.push({ x: x * m.cell, line });
      x += w;
    }
    return { ...m, place, lines: line + 1 };
  };

  const draw = () => {
    if (!attention || width === 0) return;
    const a = attention;
    const { cell, band, lineHeight, font, place, lines } = layout(a.T);
    const span = (t: number) => (t === 0 ? bosCells * cell : cell);
    const centre = (t: number) => place[t].x + span(t) / 2;
    const top = (t: number) => place[t].line * lineHeight + band;
    const row = (t: number) => a.probabilities.subarray((head * a.T + t) * a.T, (head * a.T + t + 1) * a.T);
    svg.setAttribute('viewBox', `0 0 ${width} ${lines * lineHeight}`);
    svg.setAttribute('height', String(lines * lineHeight));
    const nodes: SVGElement[] = [];
    // The selected query's row: each key shaded by its weight.
    const weights = row(selected);
    for (let s = 0; s <= selected; s += 1) {
      nodes.push(svgEl('rect', {
        x: place[s].x, y: top(s), width: span(s), height: cell + 4, rx: 3,
        class: 'first-screen-weight', 'fill-opacity': (0.6 * weights[s]).toFixed(3),
      }));
    }
    nodes.push(svgEl('rect', { x: place[selected].x - 1, y: top(selected) - 1, width: cell + 2, height: cell + 6, rx: 3, class: 'first-screen-query' }));
    // Every query's arcs to the keys it reads. A key on an earlier line gets two half
    // arcs, as a wrapped line of text is read: one leaving the query's line on the left,
    // one arriving at the key's line from the right.
    const arc = (x1: number, y1: number, x2: number, y2: number, rise: number) =>
      `M ${x1} ${y1} C ${x1} ${y1 - rise}, ${x2} ${y2 - rise}, ${x2} ${y2}`;
    for (let t = 1; t < a.T; t += 1) {
      const p = row(t);
      for (let s = 0; s <= t; s += 1) {
        if (p[s] < shown) continue;
        const attrs = { class: t === selected ? 'first-screen-arc selected' : 'first-screen-arc', 'stroke-opacity': p[s].toFixed(3) };
        const rise = (dx: number) => Math.min(band - 4, 5 + dx / 3);
        if (s === t) {  // a query reading its own key: a loop over the character
          const x = centre(t), y = top(t), w = cell * 0.3;
          nodes.push(svgEl('path', { ...attrs, d: `M ${x - w} ${y} C ${x - 2 * w} ${y - band * 0.6}, ${x + 2 * w} ${y - band * 0.6}, ${x + w} ${y}` }));
        } else if (place[s].line === place[t].line) {
          nodes.push(svgEl('path', { ...attrs, d: arc(centre(t), top(t), centre(s), top(s), rise(centre(t) - centre(s))) }));
        } else {
          nodes.push(svgEl('path', { ...attrs, d: arc(centre(t), top(t), 0, top(t) - rise(centre(t)), 0) }));
          nodes.push(svgEl('path', { ...attrs, d: arc(width, top(s) - rise(width - centre(s)), centre(s), top(s), 0) }));
        }
      }
    }
    // The characters, over the shading.
    for (let t = 0; t < a.T; t += 1) {
      const c = t === 0 ? 'BOS' : a.characters[t - 1];
      nodes.push(svgEl('text', {
        x: centre(t), y: top(t) + cell * 0.85, 'font-size': t === 0 ? Math.round(font * 0.6) : font,
        class: t === 0 ? 'first-screen-char bos' : 'first-screen-char', 'text-anchor': 'middle',
      }, c === '\n' ? '↵' : c === ' ' ? '·' : c));
    }
    svg.replaceChildren(...nodes);
    svg.setAttribute('aria-label', `Head ${head} of layer 0 on “${a.characters.join('')}”: ${readout.textContent}`);
  };

  const describe = () => {
    if (!attention) return;
    const a = attention;
    const weights = [...a.probabilities.subarray((head * a.T + selected) * a.T, (head * a.T + selected) * a.T + selected + 1)];
    const name = (s: number) => (s === 0 ? 'BOS' : s === selected ? 'itself' : quoted(a.characters[s - 1]));
    const top = weights.map((p, s) => ({ p, s })).sort((x, y) => y.p - x.p).slice(0, 3).filter(({ p }) => p >= 0.01);
    readout.textContent = `Character ${selected}, ${quoted(a.characters[selected - 1])}, reads ` +
      top.map(({ p, s }) => `${name(s)} ${percent(p)}`).join(', ') + '.';
    const score = patternScore(a, head, pattern);
    summary.textContent = a.T < 2 ? '' : pattern === 'previous'
      ? `On this line, head ${head} gives the character just before each character ${percent(score)} of its attention on average.`
      : `On this line, head ${head} keeps ${percent(score)} of each character's attention on the character itself, on average.`;
  };

  const select = (t: number) => {
    if (!attention) return;
    selected = Math.max(1, Math.min(attention.T - 1, t));
    describe();
    draw();
  };

  const update = () => {
    try {
      if ([...input.value].length === 0) throw new Error('Type at least one character.');
      attention = model.attention(input.value);
    } catch (error) {
      markInvalid([input]);
      const still = attention ? ` Still showing “${attention.characters.join('')}”.` : '';
      setStatus(status, `${error instanceof Error ? error.message : String(error)}.${still}`.replace('..', '.'), 'error');
      return;
    }
    markInvalid([input], false);
    status.textContent = '';
    state.set({ text: input.value === host.dataset.text ? null : input.value });
    selected = attention.T - 1;
    describe();
    draw();
  };

  input.addEventListener('input', update);
  const queryAt = (event: PointerEvent) => {
    if (!attention) return;
    const box = svg.getBoundingClientRect();
    const { place, cell, lineHeight } = layout(attention.T);
    const x = event.clientX - box.left, line = Math.floor((event.clientY - box.top) / lineHeight);
    const t = place.findIndex((p, i) => i > 0 && p.line === line && x >= p.x && x < p.x + cell);
    if (t > 0 && t !== selected) select(t);
  };
  svg.addEventListener('pointermove', queryAt);
  svg.addEventListener('pointerdown', queryAt);
  svg.addEventListener('keydown', (event) => {
    const step = { ArrowLeft: -1, ArrowRight: 1, Home: -Infinity, End: Infinity }[event.key];
    if (step === undefined || !attention) return;
    event.preventDefault();
    select(Number.isFinite(step) ? selected + step : step < 0 ? 1 : attention.T - 1);
  });
  // Drawn in a ResizeObserver callback, inside the rendering of the frame that shows it
  // (web/bench/page-speed.mjs times the end of that frame from the mark).
  observeWidth(svg, (w) => {
    width = w;
    draw();
    if (attention && !performance.getEntriesByName('anatomy:first-screen').length) performance.mark('anatomy:first-screen');
  });
  update();
}
