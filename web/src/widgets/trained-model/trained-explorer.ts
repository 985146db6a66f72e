// trained-model's explorer, loaded when the reader opens a trained model: the text they type,
// tokenized and run by the core through its KV cache, every layer and head's
// probabilities drawn by the same view as the attention explorer, a generate button
// that decodes token by token through the cache (each new row appears as it is
// computed), and the head summary.
//
// Typing never reruns what the cache already holds: the new ids are compared with
// the ids in the cache, the cache is rewound to their common prefix, and only the
// tokens after it are run (usually one; two when the tokenizer merges the typed
// character into the last piece).
import { CoreError } from '../../lib/core';
import { el, formatNumber, labelled, setStatus } from '../../lib/dom';
import { loadModule, openTrained } from '../../lib/trained-core';
import type { WidgetContext } from '../../lib/widget';
import { count, groupDigits } from '../../lib/words';
import { AttentionRun, AttentionView, Selection } from '../shared/attention-view';
import { HeadSummary } from './head-summary';
import { visibleText, whitespaceKey } from '../shared/token-text';

const defaultText = 'Once upon a time, there was a little girl named Lily. She loved to play outside in the park.';
// Beyond 128 positions the cells are too small to point at, even on a wide screen.
const maxTokens = 128;
const generateCount = 24;

/**
 * The sequence in the cache and every layer and head's probability rows for it. Each
 * head's rows live in one array allocated with the session, row t at offset
 * t (t + 1) / 2 with keys 0..t: a new pass copies its rows in place (allocating
 * megabytes anew for every keystroke cost more than the pass itself).
 */
class Rows {
  ids: number[] = [];
  text: string[] = [];
  /** [L][Hq][t] -> the row of query t over keys 0..t, a view into `store`. */
  readonly rows: Float32Array[][][];
  private readonly store: Float32Array[][];

  constructor(layers: number, heads: number, maxTokens: number) {
    const cells = (maxTokens * (maxTokens + 1)) / 2;
    this.store = Array.from({ length: layers }, () => Array.from({ length: heads }, () => new Float32Array(cells)));
    this.rows = Array.from({ length: layers }, () => Array.from({ length: heads }, () => []));
  }

  /**
   * Keeps the first `keep` positions, then copies in the rows the core computed for
   * the new tokens: `packed` holds, for each layer and head in turn, the new rows,
   * row i with keys 0 .. keep + i (wasm/bindings_trained.cpp). That is how they lie in
   * a head's store too, from row `keep` on: one copy per head.
   */
  extend(keep: number, added: { id: number; text: string }[], packed: Float32Array): void {
    const end = keep + added.length;
    const from = (keep * (keep + 1)) / 2, perHead = (end * (end + 1)) / 2 - from;
    const heads = this.rows.length * this.rows[0].length;
    if (packed.length !== heads * perHead) throw new Error(`the core sent ${packed.length} probabilities, the rows take ${heads * perHead}`);
    this.ids = this.ids.slice(0, keep).concat(added.map((t) => t.id));
    this.text = this.text.slice(0, keep).concat(added.map((t) => t.text));
    let at = 0;
    this.rows.forEach((layer, l) =>
      layer.forEach((head, h) => {
        const store = this.store[l][h];
        store.set(packed.subarray(at, at + perHead), from);
        at += perHead;
        head.length = keep;
        for (let t = keep; t < end; t++) head.push(store.subarray((t * (t + 1)) / 2, ((t + 1) * (t + 2)) / 2));
      }),
    );
  }
}

/** How many leading ids two lists share. */
function commonPrefix(a: number[], b: number[]): number {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n++;
  return n;
}

/** The BOS piece as a word (llama2.c's tokenizers spell it "\n<s>\n"), every other piece made visible. */
function shownText(id: number, text: string, bos: number): string {
  return id === bos ? 'BOS' : visibleText(text);
}

/** Starts fetching and compiling the wasm module (the door calls it while the model downloads). */
export function preload(): void {
  loadModule().catch(() => {}); // a failure is reported by startTrainedExplorer's own load
}

// The explorer shown now, if any: retiring it stops its generation and timer and frees
// its session, when the reader opens another model.
let retireShown: (() => void) | null = null;

/** A llama2.c checkpoint's two files, as the door fetched or the reader chose them. */
export interface ModelFiles {
  name: string;
  model: Uint8Array;
  tokenizer: Uint8Array;
}

export async function startTrainedExplorer(root: HTMLElement, context: WidgetContext, files: ModelFiles): Promise<void> {
  const session = await openTrained(files.model, files.tokenizer);
  performance.mark('anatomy:trained-model-session');
  retireShown?.();
  retireShown = () => {
    generating = false;
    window.clearTimeout(patternsTimer);
    session.delete();
  };
  const { config, bos_id: bos } = session.info;
  const rows = new Rows(config.n_layers, config.n_heads, maxTokens);

  const textInput = el('textarea', { class: 'trained-text', rows: 2, spellcheck: 'false', 'data-testid': 'trained-model-text' });
  const generate = el('button', { type: 'button', 'data-testid': 'trained-model-generate' }, `Generate ${generateCount} tokens`);
  const status = el('p', { class: 'status', 'data-testid': 'trained-model-status' });
  const timing = el('p', { class: 'update-time', 'data-testid': 'trained-model-timing' });
  const next = el('p', { class: 'view-caption', 'data-testid': 'trained-model-next' });
  const view = new AttentionView({
    testPrefix: 'trained-model',
    batchLabel: () => 'your text',
    noMixingNote: 'This view keeps the probabilities only; the attention explorer above shows what each value vector adds.',
    onChange: (selection, ms) => {
      saveView(selection);
      showTime(ms);
    },
  });
  const summary = new HeadSummary(config, (layer, head) => {
    view.show(attentionRun(), { ...view.selection, layer, head });
    saveView(view.selection);
    view.root.scrollIntoView({ block: 'nearest' });
  });

  const saveView = (sel: Selection) => context.state.set({ layer: sel.layer, head: sel.head, row: sel.row });
  const showTime = (renderMs: number, coreMs?: number) => {
    timing.textContent = `updated in ${renderMs.toFixed(1)} ms` + (coreMs === undefined ? '' : ` (forward pass ${coreMs.toFixed(1)} ms)`);
    timing.dataset.ms = renderMs.toFixed(3);
    timing.dataset.updates = String(Number(timing.dataset.updates ?? 0) + 1); // two updates may take the same time
  };
  const attentionRun = (): AttentionRun => ({
    config,
    tokens: [rows.ids],
    tokenText: [rows.ids.map((id, t) => (id === bos ? 'BOS' : rows.text[t]))],
    probabilities: rows.rows.map((heads) => [heads]),
  });

  // Runs `ids` after the first `keep` tokens in the cache, then redraws; returns the core's
  // answer. With `firstView`, the main heatmap is drawn first and the rest of the view a
  // frame later, which then calls it (AttentionView.show's mainFirst).
  const advance = (keep: number, ids: number[], firstView?: () => void) => {
    const start = performance.now();
    const result = session.extend(keep, ids);
    rows.extend(keep, result.new_tokens, session.rows());
    const coreMs = performance.now() - start;
    view.show(attentionRun(), view.selection, firstView && { mainFirst: true, whenComplete: firstView });
    next.textContent =
      `Most likely next: ${result.top.map((t) => `${JSON.stringify(shownText(t.id, t.text, bos))} ${formatNumber(t.probability, 3)}`).join(', ')}.`;
    next.dataset.nextId = String(result.next.id);
    showTime(performance.now() - start, coreMs);
    return result;
  };

  // The head summary for the text in the cache (two more passes of the core, off the typing path).
  const showPatterns = () => {
    if (rows.ids.length < 2) {
      summary.clear('Type some text: the scores need at least one token after BOS.');
      return;
    }
    try {
      summary.show(session.headPatterns(rows.ids));
    } catch (error) {
      summary.clear(`The core could not score the heads: ${error instanceof CoreError ? error.message : String(error)}`);
    }
  };

  // The summary's passes run `ms` after the last request for them (typing asks on every key).
  let patternsTimer = 0;
  const schedulePatterns = (ms: number) => {
    clearTimeout(patternsTimer);
    patternsTimer = window.setTimeout(showPatterns, ms);
  };

  // The text box: encode, keep the common prefix in the cache, run the rest.
  const update = (save: boolean, firstView?: () => void) => {
    const encoded = session.encode(textInput.value);
    if (encoded.ids.length > maxTokens) {
      textInput.setAttribute('aria-invalid', 'true');
      setStatus(status, `That is ${encoded.ids.length} tokens; this view takes at most ${maxTokens}. Still showing the last ${rows.ids.length}.`, 'error');
      return;
    }
    textInput.removeAttribute('aria-invalid');
    const shared = commonPrefix(rows.ids, encoded.ids);
    if (shared === encoded.ids.length && shared === rows.ids.length) return; // the same tokens (e.g. a space typed and removed)
    // At least the last token runs again: its row and the next-token guess come from that pass.
    const keep = Math.min(shared, encoded.ids.length - 1);
    try {
      advance(keep, encoded.ids.slice(keep), firstView);
    } catch (error) {
      setStatus(status, `The core refused this text: ${error instanceof CoreError ? error.message : String(error)}`, 'error');
      return;
    }
    setStatus(status, tokenNote(rows.ids.length, keep));
    if (save) context.state.set({ text: textInput.value === defaultText ? null : textInput.value });
    schedulePatterns(150);
  };
  textInput.addEventListener('input', () => update(true));

  // Generate: greedy, one token at a time through the cache; each step draws its new row.
  let generating = false;
  generate.addEventListener('click', async () => {
    if (generating) {
      generating = false;
      return;
    }
    generating = true;
    generate.textContent = 'Stop';
    textInput.disabled = true;
    let made = 0, why = `${generateCount} tokens generated`;
    for (; made < generateCount && generating; made++) {
      const nextId = Number(next.dataset.nextId);
      if (nextId === bos) {
        why = 'the model ended its story (it predicted BOS, which separates stories in its training text)';
        break;
      }
      if (rows.ids.length >= maxTokens) {
        why = `the view holds at most ${maxTokens} tokens`;
        break;
      }
      advance(rows.ids.length, [nextId]);
      await new Promise((resolve) => requestAnimationFrame(resolve));
    }
    if (!generating) why = `stopped after ${count(made, 'token')}`;
    generating = false;
    generate.textContent = `Generate ${generateCount} tokens`;
    textInput.disabled = false;
    textInput.value = session.decode(rows.ids);
    setStatus(status, `Greedy decoding through the KV cache: ${why}. Each step ran one new token, reading the cached keys and values of all earlier ones.`);
    context.state.set({ text: textInput.value });
    showPatterns();
  });

  const info = el(
    'p',
    { class: 'view-caption', 'data-testid': 'trained-model-info' },
    `${files.name}: ${count(config.n_layers, 'layer')}, width ${config.hidden_size}, ${count(config.n_heads, 'query head')} sharing ` +
      `${count(config.n_kv_heads, 'KV head')} of ${count(config.head_dim, 'channel')}, SwiGLU ${config.ffn_size}, vocabulary ${config.vocab_size}, ` +
      `${groupDigits(session.info.parameters)} parameters (llama2.c file version ${session.info.version}, trained with a context of ` +
      `${session.info.seq_len}). RoPE turns adjacent channel pairs (0, 1), (2, 3), …: llama2.c's convention, not the half split our tiny model uses.`,
  );
  root.replaceChildren(
    info,
    el('div', { class: 'controls' }, labelled('Text', textInput, `tokenized as llama2.c does, BOS first; up to ${maxTokens} tokens`), generate),
    el('div', { class: 'status-row' }, status, timing),
    next,
    el('div', { class: 'controls' }, ...view.controls.slice(1)), // one sequence: no sequence choice
    view.root,
    el('p', { class: 'view-caption' }, `On the axes, ${whitespaceKey}.`),
    summary.root,
  );

  textInput.value = context.state.get('text') ?? defaultText;
  const index = (name: string, limit: number) => {
    const raw = context.state.get(name);
    return raw !== null && /^\d+$/.test(raw) && Number(raw) < limit ? Number(raw) : null;
  };
  view.selection = { batch: 0, layer: index('layer', config.n_layers) ?? 0, head: index('head', config.n_heads) ?? 0, row: index('row', maxTokens) };
  // The first view: its main heatmap now, the rest of it a frame later, each marked once
  // painted.
  update(false, () => markAfterThisFrame('anatomy:trained-model-view-paint'));
  performance.mark('anatomy:trained-model-first-heatmap');
  markAfterPaint('anatomy:trained-model-first-paint');
  // The head summary's two passes start 50 ms after the frame that draws the rest (this
  // second animation frame callback comes after the view's own), whether the view drew it
  // or a change of the reader's drew everything sooner. A timer set at once would come due
  // during that frame's work and run before its mark, holding it up for the passes.
  clearTimeout(patternsTimer); // the one update just set
  requestAnimationFrame(() => requestAnimationFrame(() => schedulePatterns(50)));
}

/**
 * Marks `name` once this frame is painted: called from an animation frame callback, a
 * message posted now runs after that frame's rendering.
 */
function markAfterThisFrame(name: string): void {
  const channel = new MessageChannel();
  channel.port1.onmessage = () => performance.mark(name);
  channel.port2.postMessage(null);
}

/** Marks `name` once the next frame is painted. */
function markAfterPaint(name: string): void {
  requestAnimationFrame(() => markAfterThisFrame(name));
}

function tokenNote(n: number, kept: number): string {
  return kept === 0
    ? `${n === 1 ? 'BOS alone' : `${n} tokens`}, run in one pass through an empty KV cache.`
    : `${n} tokens: ${kept === 1 ? 'the first one' : `the first ${kept}`} came from the KV cache, ` +
        `only ${n - kept === 1 ? 'the last one was' : `the last ${n - kept} were`} run again.`;
}
