// rope, RoPE in three parts, every number from the wasm core:
//   a. the angle each channel pair turns at each position (core ropeAngles, head_dim 8,
//      theta 10000, positions 0..31), and each pair's vector at a chosen position as a
//      clock hand (core ropeRotate);
//   b. q and k rotated to every pair of positions (m, n): their dot product depends on
//      m - n alone, so each diagonal of the grid holds one value (core ropeScores);
//   c. which channels pair up under half_split and interleaved, and what running the
//      tiny model's own (half_split) weights with interleaved pairing does to a head's
//      probabilities (core forward, twice).
import '../shared/lessons.css';
import { Core, CoreError, ModelConfig } from '../../lib/core';
import { el, labelled, select, setStatus } from '../../lib/dom';
import { stillShowing } from '../../lib/fields';
import { parseTokenIds } from '../../lib/token-ids';
import type { WidgetContext } from '../../lib/widget';
import { markUpdated } from '../shared/lesson-kit';
import { RopeAngles } from './rope-angles';
import { RopeOffsets } from './rope-offsets';
import { RopePairings } from './rope-pairing';
import { HeadChoice, pairingName, Run } from './rope-setup';

const defaultIds = [3, 1, 4, 1, 5, 9, 2, 6];
const maxTokens = 32;

const parseIds = (text: string, vocabSize: number) =>
  parseTokenIds(text, { vocabSize, min: 2, max: maxTokens, why: 'Position 0 alone cannot show a difference.' });

/** The model on `ids`, as trained and with the other pairing; only the fields the parts read. */
function runModel(core: Core, ids: number[]): Run {
  const tokens = [ids];
  return {
    ids,
    // Serialising every intermediate costs more than the pass.
    own: core.forward({ tokens, capture: ['q', 'k', 'q_rope', 'k_rope', 'probabilities'] }),
    swapped: core.forward({ tokens, capture: ['q_rope', 'k_rope', 'probabilities'], rope_pairing: 'interleaved' }),
  };
}

const refusal = (error: unknown) => (error instanceof CoreError ? error.message : String(error));

/** The ids, layer and query head that parts b and c read, the run on them, and the status line. */
class RopeRun {
  readonly tokensInput = el('input', { type: 'text', class: 'tokens-input', inputmode: 'numeric', autocomplete: 'off', spellcheck: 'false', 'data-testid': 'rope-tokens' });
  readonly layerSelect: HTMLSelectElement;
  readonly headSelect: HTMLSelectElement;
  readonly status = el('p', { class: 'status', 'data-testid': 'rope-status' });
  readonly timing = el('p', { class: 'update-time', 'data-testid': 'rope-timing' });
  run: Run | null = null;
  private readonly group: number;

  constructor(private readonly core: Core, private readonly config: ModelConfig) {
    const group = (this.group = config.n_heads / config.n_kv_heads);
    this.layerSelect = select(Array.from({ length: config.n_layers }, (_, l) => [String(l), `layer ${l}`]), '0');
    this.headSelect = select(Array.from({ length: config.n_heads }, (_, h) => [String(h), `head ${h} → KV head ${Math.floor(h / group)}`]), '0');
    this.layerSelect.dataset.testid = 'rope-layer';
    this.headSelect.dataset.testid = 'rope-head';
  }

  /** The controls row and the status row. */
  views(): HTMLElement[] {
    return [
      el('div', { class: 'controls' },
        labelled('Token ids (parts b and c)', this.tokensInput, `2 to ${maxTokens} ids from 0 to ${this.config.vocab_size - 1}`),
        labelled('Layer', this.layerSelect),
        labelled('Query head', this.headSelect)),
      el('div', { class: 'status-row' }, this.status, this.timing),
    ];
  }

  choice(): HeadChoice {
    const head = Number(this.headSelect.value);
    return { layer: Number(this.layerSelect.value), head, kvHead: Math.floor(head / this.group) };
  }

  /** Runs the model on the ids in the box; false (with the problem shown) when they are not usable. */
  rerun(): boolean {
    const { tokensInput, status } = this;
    const parsed = parseIds(tokensInput.value, this.config.vocab_size);
    if ('error' in parsed) {
      tokensInput.setAttribute('aria-invalid', 'true');
      setStatus(status, `${parsed.error}${stillShowing(this.run && [['ids', this.run.ids.join(', ')]])}`, 'error');
      return false;
    }
    try {
      this.run = runModel(this.core, parsed.ids);
    } catch (error) {
      tokensInput.setAttribute('aria-invalid', 'true');
      setStatus(status, `The core refused these ids: ${refusal(error)}`, 'error');
      return false;
    }
    tokensInput.removeAttribute('aria-invalid');
    return true;
  }

  /** What the widget shows: the run of parts b and c, the head chosen, and whose q and k part b turns. */
  describe(modelVectors: boolean): string {
    const { layer, head } = this.choice();
    const run = this.run
      ? `The tiny model (pairing ${pairingName[this.config.rope_pairing]}) ran on ids ${this.run.ids.join(', ')}, once as trained and once with interleaved pairing; ` +
        `part c shows layer ${layer}, head ${head}. `
      : '';
    return run + (modelVectors
      ? `Part b shows the model's q and k from layer ${layer}, head ${head}.`
      : 'Part b shows your own q and k, as typed; "Use the model\'s q and k" goes back to the model\'s.');
  }
}

export function mountRope(root: HTMLElement, context: WidgetContext): void {
  const { core, state } = context;
  const config = core.config('tiny');
  root.classList.add('lesson-widget', 'rope-widget');
  const model = new RopeRun(core, config);
  const { tokensInput, layerSelect, headSelect, status, timing } = model;
  const angles = new RopeAngles(core, state), offsets = new RopeOffsets(core, state), pairing = new RopePairings(core);
  /** q and k for part b; false (with the problem shown) when a box is not usable. */
  const chooseVectors = () => {
    const problem = offsets.choose(model.run, model.choice());
    if (problem) setStatus(status, `${problem} Still showing the last valid q and k.`, 'error');
    return problem === null;
  };
  /** The status line, once everything on show is up to date. */
  const describe = () => setStatus(status, model.describe(offsets.usesModel));

  /** Runs `body`, times it, and saves the state. */
  function timed(body: () => void): void {
    const start = performance.now();
    try {
      body();
    } catch (error) {
      setStatus(status, `The core refused this: ${refusal(error)}`, 'error');
      return;
    }
    markUpdated(root, timing, performance.now() - start);
    state.set({
      tokens: model.run ? model.run.ids.join(',') : null, layer: layerSelect.value, head: headSelect.value,
      show: angles.show.value, p: angles.clockInput.value, q: offsets.custom.q, k: offsets.custom.k,
    });
  }

  tokensInput.addEventListener('input', () => timed(() => {
    if (!model.rerun()) return;
    const vectors = chooseVectors();
    if (vectors) offsets.render();
    pairing.render(model.run!, model.choice());
    if (vectors) describe();
  }));
  for (const node of [layerSelect, headSelect])
    node.addEventListener('change', () => timed(() => {
      if (!model.run) return;
      const vectors = !offsets.usesModel || chooseVectors();
      if (offsets.usesModel && vectors) offsets.render();
      pairing.render(model.run, model.choice());
      if (vectors && tokensInput.getAttribute('aria-invalid') !== 'true') describe();
    }));
  angles.show.addEventListener('change', () => timed(() => angles.renderAngles()));
  angles.clockInput.addEventListener('input', () => timed(() => angles.renderClocks()));
  for (const input of [offsets.qInput, offsets.kInput])
    input.addEventListener('input', () => timed(() => {
      offsets.custom = { q: offsets.qInput.value, k: offsets.kInput.value };
      if (!chooseVectors()) return;
      offsets.render();
      if (tokensInput.getAttribute('aria-invalid') !== 'true') describe();
    }));
  offsets.modelButton.addEventListener('click', () => timed(() => {
    offsets.custom = { q: null, k: null };
    if (!chooseVectors()) return;
    offsets.render();
    if (tokensInput.getAttribute('aria-invalid') !== 'true') describe();
  }));

  // ---- first draw, from the link where it is usable
  const linkedTokens = state.get('tokens');
  const fromLink = linkedTokens === null ? null : parseIds(linkedTokens, config.vocab_size);
  tokensInput.value = (fromLink && 'ids' in fromLink ? fromLink.ids : defaultIds).join(',');
  layerSelect.value = String(state.getNumber('layer', 0, 0, config.n_layers - 1));
  headSelect.value = String(state.getNumber('head', 0, 0, config.n_heads - 1));
  const start = performance.now();
  angles.renderAngles();
  angles.renderClocks();
  if (!model.rerun()) throw new Error(status.textContent ?? 'the model did not run');
  const linkProblem = offsets.choose(model.run, model.choice());
  if (linkProblem) {
    // The link's vectors were not usable: fall back to the model's.
    offsets.custom = { q: null, k: null };
    chooseVectors();
  }
  offsets.render();
  pairing.render(model.run!, model.choice());
  // Put together off the page and attached after the first draw: a heatmap that is
  // drawn while attached reads its width and forces a layout of the whole chapter.
  root.append(...model.views(), angles.root, offsets.root, pairing.root);
  markUpdated(root, timing, performance.now() - start);
  describe();
  if (linkProblem) setStatus(status, `The link's q and k were not usable (${linkProblem}) ${status.textContent}`);
  if (fromLink && 'error' in fromLink) setStatus(status, `The link's token ids were not usable (${fromLink.error}) Showing the default ids instead. ${status.textContent}`);
}
