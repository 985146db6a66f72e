// trained-model, a trained model in the page: llama2.c's stories260K (or any llama2.c .bin
// the reader opens, with its tokenizer.bin), run live by the core. This file is
// only the door: two ways in and where to get a model. The explorer's code, its
// wasm module and the bundled model's bytes are fetched when the reader points at
// or focuses a button (about to open one), else on the click, so the chapter loads
// nothing more for this widget than these few lines.
import '../shared/trained.css';
import trainedWasmUrl from '@wasm/attention_trained.wasm?url';
import { el, setStatus } from '../../lib/dom';
import { compileWasm } from '../../lib/wasm-compile';
import type { WidgetContext } from '../../lib/widget';
import type { ModelFiles } from './trained-explorer';

/** Where the page build puts the model when ../shared/models has it (scripts/build-web.sh). */
export const bundled = {
  name: 'stories260K',
  model: './models/stories260K/stories260K.bin',
  tokenizer: './models/stories260K/tok512.bin',
};

const whereToGetOne =
  'llama2.c checkpoints are published by its author as karpathy/tinyllamas on Hugging Face: stories260K.bin with ' +
  'tok512.bin (folder stories260K), or stories15M.bin, stories42M.bin and stories110M.bin with the 32,000-piece ' +
  'tokenizer.bin from the llama2.c repository. Version 0 and 1 files (float32) open here.';

async function fetchBytes(url: string): Promise<Uint8Array> {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

export function mountTrainedModel(root: HTMLElement, context: WidgetContext): void {
  const status = el('p', { class: 'status', 'data-testid': 'trained-model-door-status' });
  const load = el('button', { type: 'button', 'data-testid': 'trained-model-load' }, `Run ${bundled.name} here (1.1 MB)`);
  const modelInput = el('input', { type: 'file', accept: '.bin', 'data-testid': 'trained-model-model-file' });
  const tokenizerInput = el('input', { type: 'file', accept: '.bin', 'data-testid': 'trained-model-tokenizer-file' });
  const open = el('button', { type: 'button', 'data-testid': 'trained-model-open' }, 'Open these files');
  const summary = el('summary', {}, 'Open a model file');
  // The explorer goes here, under the door, which stays: another model can be opened at any time.
  const explorerRoot = el('div', { class: 'trained-view' });
  const door = el(
    'div',
    { class: 'trained-door' },
    el('div', { class: 'controls' }, load),
    el(
      'details',
      {},
      summary,
      el(
        'div',
        { class: 'controls' },
        el('label', {}, 'Model (.bin) ', modelInput),
        el('label', {}, 'Tokenizer (.bin) ', tokenizerInput),
        open,
      ),
      el('p', { class: 'view-caption' }, whereToGetOne),
    ),
    status,
  );
  root.replaceChildren(door, explorerRoot);

  // The explorer's code and its wasm module start loading when the reader points at or
  // focuses one of the buttons (about to use the widget), else on the click.
  let explorerLoading: Promise<typeof import('./trained-explorer')> | null = null;
  const loadExplorer = () => {
    explorerLoading ??= import('./trained-explorer').then((explorer) => {
      performance.mark('anatomy:trained-model-code');
      explorer.preload();
      return explorer;
    });
    explorerLoading.catch(() => (explorerLoading = null)); // a failed fetch may be retried
    return explorerLoading;
  };
  // The wasm compiles at the same time (lib/wasm-compile.ts), not after the code has come.
  const prepare = () => {
    compileWasm(trainedWasmUrl).catch(() => {}); // a failure is reported when the module is instantiated
    void loadExplorer().catch(() => {});
  };
  for (const button of [load, open]) {
    button.addEventListener('pointerenter', prepare, { once: true });
    button.addEventListener('focus', prepare, { once: true });
  }
  // The bundled model's bytes likewise, when the reader points at or focuses its button.
  let bundledLoading: Promise<ModelFiles> | null = null;
  const loadBundled = () => {
    bundledLoading ??= Promise.all([fetchBytes(bundled.model), fetchBytes(bundled.tokenizer)])
      .then(([model, tokenizer]) => ({ name: bundled.name, model, tokenizer }));
    bundledLoading.catch(() => (bundledLoading = null)); // a failed fetch may be retried
    return bundledLoading;
  };
  load.addEventListener('pointerenter', () => void loadBundled().catch(() => {}), { once: true });
  load.addEventListener('focus', () => void loadBundled().catch(() => {}), { once: true });

  let busy = false;
  const start = async (files: () => Promise<ModelFiles>, what: string) => {
    if (busy) return;
    busy = true;
    prepare();
    load.disabled = open.disabled = true;
    setStatus(status, `Loading ${what}…`);
    performance.mark('anatomy:trained-model-open');
    try {
      // The explorer's code and the wasm module, fetched while the model's bytes are.
      const [explorer, model] = await Promise.all([loadExplorer(), files()]);
      await explorer.startTrainedExplorer(explorerRoot, context, model);
      context.state.set({ model: model.name === bundled.name ? bundled.name : null });
      setStatus(status, '');
      summary.textContent = 'Open another model file';
      (door.querySelector('details') as HTMLDetailsElement).open = false;
    } catch (error) {
      // The model shown before, if any, stays.
      setStatus(status, `${what} could not be opened: ${error instanceof Error ? error.message : String(error)}`, 'error');
    }
    load.disabled = open.disabled = false;
    busy = false;
  };

  load.addEventListener('click', () =>
    start(async () => {
      try {
        const files = await loadBundled();
        performance.mark('anatomy:trained-model-files');
        return files;
      } catch {
        throw new Error(`this copy of the page was built without ${bundled.name}. Open the files yourself below. ${whereToGetOne}`);
      }
    }, bundled.name),
  );
  open.addEventListener('click', () => {
    const model = modelInput.files?.[0], tokenizer = tokenizerInput.files?.[0];
    if (!model || !tokenizer) {
      setStatus(status, 'Choose both files: the model (.bin) and its tokenizer (.bin).', 'error');
      return;
    }
    void start(async () => ({
      name: model.name.replace(/\.bin$/, ''),
      model: new Uint8Array(await model.arrayBuffer()),
      tokenizer: new Uint8Array(await tokenizer.arrayBuffer()),
    }), model.name);
  });

  // A link to this widget's view opens the bundled model straight away.
  if (context.state.get('model') === bundled.name) load.click();
}
