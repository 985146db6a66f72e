// W1, the attention explorer: the tiny model run live on ids the reader types.
// One forward pass of the wasm core (with capture) per change of ids gives every
// layer's probabilities, value vectors and head outputs; changing the sequence,
// layer, head or followed row only redraws from that pass.
import { CoreError, ModelConfig } from '../lib/core';
import { el, labelled, setStatus } from '../lib/dom';
import { parseTokenIds } from '../lib/token-ids';
import type { WidgetContext } from '../lib/widget';
import { AttentionRun, AttentionView, Selection } from './attention-view';

const defaultIds = [1, 2, 3, 4, 5, 6]; // `attn verify`'s --tokens default
const batchSize = 2;                    // `attn verify`'s --batch default
// Beyond 32 positions the heatmap cells get too small to point at on a phone.
const maxTokens = 32;

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

export function mountAttentionExplorer(root: HTMLElement, context: WidgetContext): void {
  const config = context.core.config('tiny');
  const status = el('p', { class: 'status', 'data-testid': 'w1-status' });
  const timing = el('p', { class: 'update-time', 'data-testid': 'w1-timing' });
  const tokensInput = el('input', { type: 'text', class: 'tokens-input', inputmode: 'numeric', autocomplete: 'off', spellcheck: 'false', 'data-testid': 'w1-tokens' });

  let ids = defaultIds;
  const view = new AttentionView({
    testPrefix: 'w1',
    batchLabel: (b) => (b === 0 ? 'sequence 0 (your ids)' : `sequence ${b} (shifted ids)`),
    onChange: (selection, ms) => {
      saveState(context, ids, selection);
      showTime(timing, ms);
    },
  });

  // Recomputes for the ids in the box; bad ids leave the last good view in place.
  const update = (save: boolean) => {
    const parsed = parseIds(tokensInput.value, config.vocab_size);
    if ('error' in parsed) {
      tokensInput.setAttribute('aria-invalid', 'true');
      setStatus(status, `${parsed.error} Still showing ids ${ids.join(', ')}.`, 'error');
      return;
    }
    try {
      const start = performance.now();
      const run = runModel(context, config, parsed.ids);
      const coreMs = performance.now() - start;
      view.show(run, view.selection);
      ids = parsed.ids;
      showTime(timing, performance.now() - start, coreMs);
    } catch (error) {
      tokensInput.setAttribute('aria-invalid', 'true');
      setStatus(status, `The core refused these ids: ${error instanceof CoreError ? error.message : String(error)}`, 'error');
      return;
    }
    tokensInput.removeAttribute('aria-invalid');
    setStatus(status, sequenceNote(ids, config.vocab_size));
    if (save) saveState(context, ids, view.selection);
  };
  tokensInput.addEventListener('input', () => update(true));

  root.append(
    el(
      'div',
      { class: 'controls' },
      labelled('Token ids', tokensInput, `1 to ${maxTokens} ids, each 0 to ${config.vocab_size - 1}`),
      ...view.controls,
    ),
    el('div', { class: 'status-row' }, status, timing),
    view.root,
  );

  // Start from the link's ids when they are valid, else from the default.
  const linked = context.state.get('tokens');
  const fromLink = linked === null ? null : parseIds(linked, config.vocab_size);
  tokensInput.value = (fromLink && 'ids' in fromLink ? fromLink.ids : defaultIds).join(',');
  view.selection = readSelection(context, config);
  update(false);
  if (fromLink && 'error' in fromLink) setStatus(status, `The link's token ids were not usable (${fromLink.error}) Showing the default ids instead.`);
}

/** What the batch holds, so the second sequence is not a mystery. */
function sequenceNote(ids: number[], vocabSize: number): string {
  return (
    `The core runs a batch of ${batchSize}, as attn verify --batch ${batchSize} does: sequence 0 is your ${ids.length} ids, ` +
    `sequence 1 shifts the id at position t to (id + 7 + t) mod ${vocabSize}.`
  );
}

/** "updated in 3.2 ms", with the forward pass's share when there was one. */
function showTime(node: HTMLElement, totalMs: number, coreMs?: number): void {
  node.textContent = `updated in ${totalMs.toFixed(1)} ms` + (coreMs === undefined ? '' : ` (forward pass ${coreMs.toFixed(1)} ms)`);
  node.dataset.ms = totalMs.toFixed(3);
}
