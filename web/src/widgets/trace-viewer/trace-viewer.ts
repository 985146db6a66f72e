// trace-viewer, open a trace: a file from `attn verify --export-trace` or `attn probe
// --output`, or the page's own from the wasm core (the trace viewer's module,
// lib/trace-viewer-core.ts, fetched on that click), checked against the schema and
// shown with the explorer's heatmaps, its configuration, build and check records
// (trace-display.ts, fetched when the reader first opens a trace). A probe's trace
// also gets its own summary (prompt, next tokens, continuation, cache against full
// pass) and a plot of its attention sinks; its token text labels the heatmaps' axes,
// with whitespace made visible. Until a trace opens the widget shows only how to open
// one, no empty selects. A file that is not a valid trace gets one message naming the
// problem; the widget keeps showing the trace it showed before and says which file
// that is (trace-viewer-shown). Its second part (diff-door.ts) checks a learner's own tensors
// against the core, as `attn diff` does; a dropped .npz or .safetensors goes there.
import { el, formatFileSize, labelled, setStatus } from '../../lib/dom';
import type { WidgetContext } from '../../lib/widget';
import { diffDoor, isTensorFile } from './diff-door';
import type { TraceDisplay } from './trace-display';
import type { OpenedTrace } from './trace-file';

// ---------------------------------------------------------------- the widget

export function mountTraceViewer(root: HTMLElement, context: WidgetContext): void {
  const status = el('p', { class: 'status', 'data-testid': 'trace-viewer-status' });
  const fileInput = el('input', { type: 'file', accept: '.json,application/json', 'data-testid': 'trace-viewer-file' });
  const ownButton = el('button', { type: 'button', class: 'secondary', 'data-testid': 'trace-viewer-load-own' }, "Load the page's own trace");
  const dropZone = el(
    'div',
    { class: 'drop-zone' },
    labelled('Trace file (JSON)', fileInput, 'or drop the file onto this widget'),
    ownButton,
  );
  // Which trace the summary, heatmaps and checks below belong to: after a file that failed
  // to open, they are still the previous one's, and this line says so.
  const shownLine = el('p', { class: 'trace-shown', 'data-testid': 'trace-viewer-shown', hidden: true });
  // Where the display goes once its code has come (trace-display.ts).
  const displayHost = el('div', { class: 'trace-display' });
  let displayLoading: Promise<typeof import('./trace-display')> | null = null;
  const loadDisplay = () => {
    displayLoading ??= import('./trace-display');
    displayLoading.catch(() => (displayLoading = null)); // a failed fetch may be retried
    return displayLoading;
  };
  let display: TraceDisplay | null = null;
  const diff = diffDoor(context);
  root.append(dropZone, status, shownLine, displayHost, diff.root);
  setStatus(
    status,
    'No trace open yet. Choose a trace file (JSON) from attn verify --export-trace or attn probe --output, ' +
      'or load the trace the page computes itself; its heatmaps and checks appear here.',
  );
  let shown: string | null = null; // the trace on screen, as the status line named it

  const show = (trace: OpenedTrace, source: string, on: TraceDisplay) => {
    on.show(trace);
    shown = source;
    shownLine.textContent = `Showing ${source}.`;
    delete shownLine.dataset.kind;
    setStatus(status, `Opened ${source}.`);
  };
  const refuse = (source: string, error: unknown) => {
    const reason = error instanceof Error ? error.message : String(error);
    setStatus(status, `Could not open ${source}: ${reason}${/[.!?]$/.test(reason) ? '' : '.'} ${shown ? `Still showing ${shown}.` : 'No trace is shown.'}`, 'error');
    if (shown) {
      shownLine.textContent = `Still showing the previous trace, ${shown}: ${source} did not open.`;
      shownLine.dataset.kind = 'previous';
    }
  };

  // The display's code, and its one instance, made on the first open.
  const ready = async () => {
    const module = await loadDisplay();
    if (!display) {
      display = new module.TraceDisplay();
      displayHost.append(...display.nodes);
    }
    return { module, on: display };
  };
  // Opening is asynchronous (the display's code and the module fetched, a file read): the
  // reader's last choice wins over one still on its way.
  let latest = 0;
  const openFile = async (file: File) => {
    const request = ++latest;
    try {
      const { module, on } = await ready();
      module.checkTraceSize(file.size);
      const trace = module.parseTrace(await file.text());
      if (request === latest) show(trace, `${file.name} (${formatFileSize(file.size)})`, on);
    } catch (error) {
      if (request === latest) refuse(file.name, error);
    }
  };
  fileInput.addEventListener('change', () => {
    const file = fileInput.files?.[0];
    if (file) void openFile(file);
    fileInput.value = ''; // choosing the same file again, after fixing it, must fire change
  });
  ownButton.addEventListener('click', async () => {
    const request = ++latest;
    try {
      setStatus(status, "Computing the page's own trace…");
      const [{ module, on }, { loadTraceViewerCore }] = await Promise.all([ready(), import('../../lib/trace-viewer-core')]);
      // The same defaults as `attn verify`: ids 1..6, batch 2, seed 1.
      const trace = module.validateTrace((await loadTraceViewerCore()).trace());
      if (request === latest) show(trace, "the page's own trace (wasm core, ids 1–6, batch 2)", on);
    } catch (error) {
      if (request === latest) refuse("the page's own trace", error);
    }
  });
  // A trace opens above; a learner's tensors (.npz, .safetensors) go to the check below.
  acceptDrops(
    root.closest<HTMLElement>('.widget') ?? root,
    [dropZone, diff.zone],
    (file) => (isTensorFile(file.name) ? diff.open(file) : void openFile(file)),
    (message) => setStatus(status, message, 'error'),
  );
}

/** Makes `target` take a dropped file, lighting up `zones` while something is dragged over. */
function acceptDrops(target: HTMLElement, zones: HTMLElement[], open: (file: File) => void, refuse: (message: string) => void): void {
  const light = (on: boolean) => zones.forEach((zone) => zone.classList.toggle('dragging', on));
  target.addEventListener('dragover', (e) => {
    e.preventDefault(); // without this the browser opens the file itself
    if (e.dataTransfer) e.dataTransfer.dropEffect = 'copy';
    light(true);
  });
  target.addEventListener('dragleave', (e) => {
    if (!target.contains(e.relatedTarget as Node | null)) light(false);
  });
  target.addEventListener('drop', (e) => {
    e.preventDefault();
    light(false);
    const files = e.dataTransfer?.files;
    if (!files || files.length === 0) refuse('Nothing to open: drop a trace file (JSON) or your tensors (.npz, .safetensors), not text or a link.');
    else if (files.length > 1) refuse(`${files.length} files dropped; open one file at a time.`);
    else open(files[0]);
  });
}
