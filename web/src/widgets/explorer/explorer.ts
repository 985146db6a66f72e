// The attention explorer: the tiny model run live on ids the reader types.
// One forward pass of the wasm core (with capture) per change of ids gives every
// layer's probabilities, value vectors and head outputs; changing the sequence,
// layer, head or followed row only redraws from that pass.
// A switch swaps the seeded random weights for the same architecture trained on
// Shakespeare by `attn train` (web/public/models/shakespeare/, opened by the core
// through lib/checkpoint-core.ts when the reader picks it): then the reader types
// text, one token per character, and the axes show the characters.
import type { Checkpoint } from '../../lib/checkpoint-core';
import type { ModelConfig } from '../../lib/core';
import { el, labelled, setStatus } from '../../lib/dom';
import { parseTokenIds } from '../../lib/token-ids';
import { count, groupDigits } from '../../lib/words';
import type { WidgetContext } from '../../lib/widget';
import { AttentionRun, AttentionView, Selection } from '../shared/attention-view';

const defaultIds = [1, 2, 3, 4, 5, 6]; // `attn verify`'s --tokens default
const batchSize = 2;                    // `attn verify`'s --batch default
// Beyond 32 positions the heatmap cells get too small to point at on a phone.
const maxTokens = 32;

/** What the trained weights show first: a name and a line, as the plays write them. */
const defaultText = 'ROMEO:\nShall I hear more, or shall I speak at this?';

const parseIds = (text: string, vocabSize: number) => parseTokenIds(text, { vocabSize, max: maxTokens, taker: 'the explorer' });

/** One forward pass over the batch, kept as the view's run. */
function runModel(context: WidgetContext, config: ModelConfig, ids: number[]): AttentionRun {
  // The core builds the batch as `attn verify --batch` does. Only what the view shows
  // is captured: serialising every intermediate costs several times the pass itself.
  const result = context.core.forward({ ids, batch: batchSize, capture: ['probabilities', 'v', 'head_outputs'] });
  const layers = result.layers!;
  return {
    config,
    tokens: result.tokens,
    probabilities: layers.map((layer) => layer.probabilities),
    mixing: { v: layers.map((layer) => layer.v), headOutputs: layers.map((layer) => layer.head_outputs) },
  };
}

/** One forward pass of the trained checkpoint over BOS + text (a batch of one). */
function runTrained(checkpoint: Checkpoint, text: string): AttentionRun {
  const result = checkpoint.forward(text);
  return {
    config: checkpoint.info.config,
    tokens: result.tokens,
    tokenText: [result.labels],
    probabilities: result.layers.map((layer) => layer.probabilities),
    mixing: { v: result.layers.map((layer) => layer.v), headOutputs: result.layers.map((layer) => layer.head_outputs) },
  };
}

/** Writes the view to the URL (row only once the reader picked one). */
function saveState(context: WidgetContext, ids: number[], sel: Selection): void {
  context.state.set({ tokens: ids.join(','), batch: sel.batch, layer: sel.layer, head: sel.head, row: sel.row });
}

/** The link's sequence, layer, head and row; anything missing or out of range is the default. */
function readSelection(context: WidgetContext, config: ModelConfig): Selection {
  const index = (name: string, count: number): number | null => {
    const raw = context.state.get(name);
    const value = raw === null || !/^\d+$/.test(raw) ? NaN : Number(raw);
    return value < count ? value : null; // NaN < count is false
  };
  return {
    batch: index('batch', batchSize) ?? 0,
    layer: index('layer', config.n_layers) ?? 0,
    head: index('head', config.n_heads) ?? 0,
    row: index('row', maxTokens), // null: follow the last query
  };
}

export function mountExplorer(root: HTMLElement, context: WidgetContext): void {
  const config = context.core.config('tiny');
  const status = el('p', { class: 'status', 'data-testid': 'explorer-status' });
  const timing = el('p', { class: 'update-time', 'data-testid': 'explorer-timing' });
  const tokensInput = el('input', { type: 'text', class: 'tokens-input', inputmode: 'numeric', autocomplete: 'off', spellcheck: 'false', 'data-testid': 'explorer-tokens' });
  // A text area, as the plays' lines end in newlines (an input would drop them).
  const textInput = el('textarea', { rows: 2, class: 'tokens-input', autocomplete: 'off', spellcheck: 'false', 'data-testid': 'explorer-text' });
  const randomChoice = el('input', { type: 'radio', name: 'explorer-weights', value: 'random', checked: '', 'data-testid': 'explorer-weights-random' });
  const trainedChoice = el('input', { type: 'radio', name: 'explorer-weights', value: 'shakespeare', 'data-testid': 'explorer-weights-trained' });
  const weightsChoice = el(
    'fieldset',
    { class: 'weights-choice' },
    el('legend', {}, 'Weights'),
    el('label', {}, randomChoice, ' random (seed 1)'),
    el('label', {}, trainedChoice, ' trained on Shakespeare'),
  );

  let ids = defaultIds;
  let text = defaultText;
  let checkpoint: Checkpoint | null = null; // set while the trained weights are shown
  const saveView = () => {
    const sel = view.selection;
    if (checkpoint) {
      context.state.set({ weights: 'shakespeare', text, tokens: null, batch: null, layer: sel.layer, head: sel.head, row: sel.row });
    } else {
      context.state.set({ weights: null, text: null });
      saveState(context, ids, sel);
    }
  };
  const view = new AttentionView({
    testPrefix: 'explorer',
    batchLabel: (b) => (checkpoint ? 'your text' : b === 0 ? 'sequence 0 (your ids)' : `sequence ${b} (shifted ids)`),
    onChange: (_selection, ms) => {
      saveView();
      showTime(timing, ms);
    },
  });
  const idsControl = labelled('Token ids', tokensInput, `1 to ${maxTokens} ids, each 0 to ${config.vocab_size - 1}`);
  const textControl = labelled('Text', textInput, 'one token per character, after BOS');
  textControl.hidden = true;

  // Recomputes for what is in the box; bad input leaves the last good view in place.
  const show = (input: HTMLInputElement | HTMLTextAreaElement, compute: () => { run: AttentionRun; accept: () => void }, refused: string) => {
    try {
      const start = performance.now();
      const { run, accept } = compute();
      const coreMs = performance.now() - start;
      view.show(run, view.selection);
      accept();
      showTime(timing, performance.now() - start, coreMs);
      input.removeAttribute('aria-invalid');
      return true;
    } catch (error) {
      input.setAttribute('aria-invalid', 'true');
      const message = error instanceof Error ? error.message : String(error);
      setStatus(status, `${refused}: ${message}`, 'error');
      return false;
    }
  };
  const update = (save: boolean) => {
    const parsed = parseIds(tokensInput.value, config.vocab_size);
    if ('error' in parsed) {
      tokensInput.setAttribute('aria-invalid', 'true');
      setStatus(status, `${parsed.error} Still showing ids ${ids.join(', ')}.`, 'error');
      return;
    }
    const ok = show(tokensInput, () => ({ run: runModel(context, config, parsed.ids), accept: () => (ids = parsed.ids) }),
      'The core refused these ids');
    if (!ok) return;
    setStatus(status, sequenceNote(ids, config.vocab_size));
    if (save) saveView();
  };
  const updateText = (save: boolean) => {
    const trained = checkpoint!;
    const typed = textInput.value;
    const ok = show(textInput, () => ({ run: runTrained(trained, typed), accept: () => (text = typed) }),
      `The trained model cannot read this text (still showing ${JSON.stringify(text)})`);
    if (!ok) return;
    setStatus(status, trainedNote(trained, text));
    if (save) saveView();
  };
  tokensInput.addEventListener('input', () => update(true));
  textInput.addEventListener('input', () => updateText(true));

  // The switch: the trained weights (about 400 KB) and the module that opens them load on first use.
  let opening = false;
  const useTrained = async (save: boolean) => {
    if (opening) return;
    opening = true;
    setStatus(status, 'Loading the weights trained on Shakespeare…');
    try {
      const { openShakespeare } = await import('../../lib/checkpoint-core');
      checkpoint = await openShakespeare();
    } catch (error) {
      checkpoint = null;
      randomChoice.checked = true;
      setStatus(status, `Could not load the trained weights: ${error instanceof Error ? error.message : String(error)}. Still showing the random ones.`, 'error');
      return;
    } finally {
      opening = false;
    }
    if (!trainedChoice.checked) return; // the reader switched back while it loaded
    idsControl.hidden = true;
    textControl.hidden = false;
    textInput.value = text;
    view.selection = { ...view.selection, batch: 0, row: null };
    updateText(save);
  };
  const useRandom = () => {
    checkpoint = null;
    idsControl.hidden = false;
    textControl.hidden = true;
    view.selection = { ...view.selection, row: null };
    update(true);
  };
  trainedChoice.addEventListener('change', () => void useTrained(true));
  randomChoice.addEventListener('change', useRandom);

  root.append(
    el('div', { class: 'controls' }, weightsChoice, idsControl, textControl, ...view.controls),
    el('div', { class: 'status-row' }, status, timing),
    view.root,
  );

  // Start from the link's weights and input when they are valid, else from the default.
  if (context.state.get('weights') === 'shakespeare') {
    text = context.state.get('text') ?? defaultText;
    trainedChoice.checked = true;
    view.selection = readSelection(context, config);
    void useTrained(false);
    return;
  }
  const linked = context.state.get('tokens');
  const fromLink = linked === null ? null : parseIds(linked, config.vocab_size);
  tokensInput.value = (fromLink && 'ids' in fromLink ? fromLink.ids : defaultIds).join(',');
  view.selection = readSelection(context, config);
  update(false);
  if (fromLink && 'error' in fromLink) setStatus(status, `The link's token ids were not usable (${fromLink.error}) Showing the default ids instead.`);
}

/** What the trained weights are and what the reader is looking at. */
function trainedNote(checkpoint: Checkpoint, text: string): string {
  const r = checkpoint.record;
  return (
    `Weights trained by attn train on ${r.corpus.file} (${groupDigits(r.settings.steps)} steps, width ` +
    `${r.config.hidden_size}; held-out loss ${r.result.heldout_loss.toFixed(2)} nats per character). ` +
    `${count([...text].length, 'character')} after BOS; at most ${groupDigits(checkpoint.info.context - 1)}.`
  );
}

/** What the batch holds, so the second sequence is not a mystery. */
function sequenceNote(ids: number[], vocabSize: number): string {
  return (
    `The core runs a batch of ${batchSize}, as attn verify --batch ${batchSize} does: sequence 0 is your ${count(ids.length, 'id')}, ` +
    `sequence 1 shifts the id at position t to (id + 7 + t) mod ${vocabSize}.`
  );
}

/** "updated in 3.2 ms", with the forward pass's share when there was one. */
function showTime(node: HTMLElement, totalMs: number, coreMs?: number): void {
  node.textContent = `updated in ${totalMs.toFixed(1)} ms` + (coreMs === undefined ? '' : ` (forward pass ${coreMs.toFixed(1)} ms)`);
  node.dataset.ms = totalMs.toFixed(3);
}
