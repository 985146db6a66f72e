// trace-viewer's second part: check your own Llama against the core, as `attn diff` does.
// The learner takes the checkpoint the page has (model.safetensors and config.json,
// from the trace viewer's module, lib/trace-viewer-core.ts), runs their model on the
// token ids given here, saves its intermediate tensors and opens the file. This file is only
// the door: the ids, the seed, the shapes the tensors must have, the downloads and
// the file input. The wasm module, the report and its heatmaps (diff-panel.ts) load
// when the learner opens a file or asks for either file, so the chapter fetches
// nothing more for them until then.
import './diff.css';
import { cited, citedCode } from '../../lib/cited';
import type { ModelConfig } from '../../lib/core';
import { el, formatFileSize, labelled, numberInput, setStatus, uid } from '../../lib/dom';
import { download } from '../../lib/export';
import { parseTokenIds } from '../../lib/token-ids';
import { count, groupDigits } from '../../lib/words';
import type { WidgetContext } from '../../lib/widget';
import type { DiffPanel, LearnerFile } from './diff-panel';

const defaultIds = '1,5,9,2,7,3,11,4';
const defaultSeed = 1;
const maxSeed = 2 ** 31 - 1;
const maxIds = 64;
const maxSequences = 8;
// 8 sequences of 64 tokens make a float64 file of about 20 MB for the tiny model.
const maxFileBytes = 64 * 1024 * 1024;

/** A file the check takes (by name): NumPy's .npz or safetensors. Anything else is a trace. */
export function isTensorFile(name: string): boolean {
  return /\.(npz|safetensors)$/i.test(name);
}

export interface DiffDoor {
  root: HTMLElement;
  /** Lit up while a file is dragged over the widget. */
  zone: HTMLElement;
  open(file: File): void;
}

type Run = { tokens: number[][]; seed: number };

/** "1,5,9;2,7,3": one sequence per ';', all as long, ids in the vocabulary. */
function readTokens(text: string, vocabSize: number): { tokens: number[][] } | { error: string } {
  const rows = text.split(';').map((row) => row.trim());
  if (rows.length > maxSequences) return { error: `${rows.length} sequences given; the check takes at most ${maxSequences}.` };
  const tokens: number[][] = [];
  for (const [b, row] of rows.entries()) {
    const parsed = parseTokenIds(row, { vocabSize, max: maxIds, taker: 'the check' });
    if ('error' in parsed) return { error: rows.length > 1 ? `Sequence ${b}: ${parsed.error}` : parsed.error };
    if (b > 0 && parsed.ids.length !== tokens[0].length)
      return { error: `Sequence ${b} has ${count(parsed.ids.length, 'id')} and sequence 0 has ${tokens[0].length}; all must be as long.` };
    tokens.push(parsed.ids);
  }
  return { tokens };
}

/** The shape each name of docs/diff.md has for B sequences of T tokens. */
function shapesText(c: ModelConfig, B: number, T: number): string {
  const groups: [number[], string][] = [
    [[B, T, c.hidden_size], 'embed, attn_norm, attn_out, resid_mid, ffn_norm, ffn_out, out, final_norm'],
    [[B, c.n_heads, T, c.head_dim], 'q, q_rope, heads'],
    [[B, c.n_kv_heads, T, c.head_dim], 'k, v, k_rope'],
    [[B, c.n_heads, T, T], 'scores, probs'],
    [[B, T, c.vocab_size], 'logits'],
  ];
  return (
    `For ${count(B, 'sequence')} of ${count(T, 'token')} your tensors have these shapes ` +
    `(the per-layer names under layers.0 to layers.${c.n_layers - 1}): ` +
    groups.map(([shape, names]) => `[${shape.join(', ')}] ${names}`).join('; ') + '.'
  );
}

export function diffDoor(context: WidgetContext): DiffDoor {
  const config = context.core.config('tiny');
  const idsInput = el('input', { type: 'text', class: 'tokens-input', spellcheck: 'false', 'data-testid': 'trace-viewer-diff-ids' });
  idsInput.value = context.state.get('diff-ids') ?? defaultIds;
  const seedInput = numberInput('number', 0, maxSeed, 1, context.state.getNumber('diff-seed', defaultSeed, 0, maxSeed));
  seedInput.dataset.testid = 'trace-viewer-diff-seed';
  const shapes = el('p', { class: 'view-caption', 'data-testid': 'trace-viewer-diff-shapes' });
  const commands = el('code');
  const modelButton = el('button', { type: 'button', class: 'secondary', 'data-testid': 'trace-viewer-diff-model' }, 'model.safetensors');
  const configButton = el('button', { type: 'button', class: 'secondary', 'data-testid': 'trace-viewer-diff-config' }, 'config.json');
  const fileInput = el('input', { type: 'file', accept: '.npz,.safetensors', 'data-testid': 'trace-viewer-diff-file' });
  const zone = el('div', { class: 'drop-zone' }, labelled('Your tensors (.npz or .safetensors)', fileInput, 'or drop the file onto this widget'));
  const status = el('p', { class: 'status', 'data-testid': 'trace-viewer-diff-status' });
  const reportHost = el('div', { 'data-testid': 'trace-viewer-diff-report' });
  const titleId = uid('diff-title');
  const root = el(
    'section',
    { class: 'trace-diff', 'aria-labelledby': titleId },
    el('h3', { class: 'view-subtitle', id: titleId }, 'Check your own Llama'),
    el(
      'p',
      {},
      'Run your Llama on the checkpoint below and on these token ids, save its intermediate tensors with ',
      citedCode('tools/anatomy_dump.py', cited.anatomyDump, true),
      ' (a download: NumPy only; the names and shapes are in ',
      citedCode('docs/diff.md', cited.diff),
      '), and open the file here. The core runs the same ids through the same weights in float64 and compares your tensors ' +
        'in the order the forward pass computes them: the first one that leaves ours is where your code differs, and if a ' +
        'common mistake gives your numbers, it is named. On your machine the same check is ',
      citedCode('attn diff --checkpoint DIR --tokens IDS --theirs FILE', cited.diff),
      '.',
    ),
    el(
      'div',
      { class: 'controls' },
      labelled('Token ids', idsInput, 'commas or spaces; one sequence per ";", all as long'),
      labelled('Weights seed', seedInput, 'the tiny model with seeded weights'),
    ),
    shapes,
    el('div', { class: 'controls diff-downloads' }, el('span', { class: 'diff-downloads-label' }, 'The checkpoint:'), modelButton, configButton),
    el('pre', { tabindex: 0, 'aria-label': 'the same check from the command line' }, commands),
    zone,
    status,
    reportHost,
  );

  const readSeed = (): number | null => {
    const seed = Number(seedInput.value);
    return Number.isInteger(seed) && seed >= 0 && seed <= maxSeed ? seed : null;
  };
  const seedError = `The weights seed is a whole number from 0 to ${maxSeed}.`;
  const read = (): Run | { error: string } => {
    const seed = readSeed();
    const parsed = readTokens(idsInput.value, config.vocab_size);
    if ('error' in parsed) return parsed;
    return seed === null ? { error: seedError } : { tokens: parsed.tokens, seed };
  };
  const describeRun = () => {
    const seed = readSeed(), parsed = readTokens(idsInput.value, config.vocab_size);
    idsInput.setAttribute('aria-invalid', String('error' in parsed));
    seedInput.setAttribute('aria-invalid', String(seed === null));
    if ('error' in parsed || seed === null) {
      shapes.textContent = 'error' in parsed ? parsed.error : seedError;
      return;
    }
    const B = parsed.tokens.length, T = parsed.tokens[0].length;
    shapes.textContent = shapesText(config, B, T);
    const ids = parsed.tokens.map((row) => row.join(',')).join(';');
    commands.textContent =
      `attn export-checkpoint tiny --seed ${seed}      # or the two files above, in a folder\n` +
      `attn diff --checkpoint tiny --tokens ${B > 1 ? `"${ids}"` : ids} --theirs mine.npz`;
    modelButton.setAttribute('aria-label', `Download model.safetensors (seed ${seed})`);
    configButton.setAttribute('aria-label', `Download config.json (seed ${seed})`);
  };

  // ---- the checkpoint

  const refuse = (what: string, error: unknown) =>
    setStatus(status, `Could not ${what}: ${error instanceof Error ? error.message : String(error)}`, 'error');
  modelButton.addEventListener('click', async () => {
    const seed = readSeed();
    if (seed === null) return refuse('save model.safetensors', new Error(seedError));
    try {
      setStatus(status, 'Loading the checkpoint writer…');
      const { loadTraceViewerCore } = await import('../../lib/trace-viewer-core');
      const bytes = (await loadTraceViewerCore()).exportCheckpoint(seed);
      download(new Blob([bytes as Uint8Array<ArrayBuffer>], { type: 'application/octet-stream' }), 'model.safetensors');
      setStatus(status, `Saved model.safetensors: the tiny model with seed ${seed}, float32, ${groupDigits(bytes.length)} bytes.`);
    } catch (error) {
      refuse('save model.safetensors', error);
    }
  });
  configButton.addEventListener('click', async () => {
    const seed = readSeed();
    if (seed === null) return refuse('save config.json', new Error(seedError));
    try {
      setStatus(status, 'Loading the checkpoint writer…');
      const { loadTraceViewerCore } = await import('../../lib/trace-viewer-core');
      const checkpointConfig = (await loadTraceViewerCore()).checkpointConfig(seed);
      download(new Blob([JSON.stringify(checkpointConfig, null, 2) + '\n'], { type: 'application/json' }), 'config.json');
      setStatus(status, "Saved config.json: the tiny model's Hugging Face configuration (the same for every seed).");
    } catch (error) {
      refuse('save config.json', error);
    }
  });

  // ---- the check

  let panelLoading: Promise<DiffPanel> | null = null;
  const loadPanel = () => {
    panelLoading ??= import('./diff-panel').then((module) => {
      const panel = new module.DiffPanel();
      reportHost.append(panel.root);
      return panel;
    });
    panelLoading.catch(() => (panelLoading = null)); // a failed fetch may be retried
    return panelLoading;
  };
  // The last file the core read: a changed id or seed checks it again.
  let held: LearnerFile | null = null;
  let latest = 0;
  const compare = async (file: LearnerFile) => {
    const run = read();
    if ('error' in run) return refuse(`check ${file.name}`, new Error(run.error));
    const mine = ++latest;
    setStatus(status, `Checking ${file.name} against the core…`);
    try {
      const show = await (await loadPanel()).compare(file, run.tokens, run.seed);
      if (mine !== latest) return; // a newer file or newer ids came in meanwhile
      show();
      held = file;
      const B = run.tokens.length, T = run.tokens[0].length;
      setStatus(status, `Checked ${file.name} (${formatFileSize(file.bytes.length)}) against the core: seed ${run.seed}, ${B} × ${T} tokens.`);
    } catch (error) {
      if (mine === latest) refuse(`check ${file.name}`, error);
    }
  };
  const open = async (file: File) => {
    if (file.size > maxFileBytes)
      return refuse(`check ${file.name}`, new Error(`the file is ${formatFileSize(file.size)}; the page checks files up to ${formatFileSize(maxFileBytes)}.`));
    await compare({ name: file.name, bytes: new Uint8Array(await file.arrayBuffer()) });
  };
  fileInput.addEventListener('change', () => {
    const file = fileInput.files?.[0];
    if (file) void open(file);
    fileInput.value = ''; // choosing the same file again, after fixing it, must fire change
  });
  for (const input of [idsInput, seedInput]) {
    input.addEventListener('input', describeRun);
    input.addEventListener('change', () => {
      const ids = idsInput.value.trim(), seed = Number(seedInput.value);
      context.state.set({ 'diff-ids': ids === defaultIds ? null : ids, 'diff-seed': seed === defaultSeed ? null : seed });
      if (held) void compare(held);
    });
  }
  describeRun();
  setStatus(status, 'No file checked yet.');
  return { root, zone, open: (file) => void open(file) };
}
