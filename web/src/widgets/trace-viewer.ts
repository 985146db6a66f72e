// W8, open a trace: a file from `attn verify --export-trace` or `attn probe
// --output`, or the page's own from the wasm core (the trace viewer's module,
// lib/trace-viewer-core.ts, fetched on that click), checked against the schema and
// shown with the explorer's heatmaps, its configuration, build and check records.
// A probe's trace also gets its own summary (prompt, next tokens, continuation,
// cache against full pass) and a plot of its attention sinks; its token text labels
// the heatmaps' axes, with whitespace made visible. Until a trace opens the widget
// shows only how to open one, no empty selects. A file that is not a valid trace
// gets one message naming the problem; the widget keeps showing the trace it showed
// before and says which file that is (w8-shown). Its second part (diff-door.ts)
// checks a learner's own tensors against the core, as `attn diff` does; a dropped
// .npz or .safetensors goes there.
import { CoreError } from '../lib/core';
import { el, formatFileSize, labelled, setStatus } from '../lib/dom';
import type { WidgetContext } from '../lib/widget';
import { AttentionRun, AttentionView } from './attention-view';
import { diffDoor, isTensorFile } from './diff-door';
import { probeSummary } from './probe-summary';
import { SinkData, SinkPlot } from './sink-plot';
import { maxLabelChars, tokenLabel, visibleText, whitespaceKey } from './token-text';
import { checkTraceSize, OpenedTrace, parseTrace, ProbeRecord, TraceFormatError, validateTrace } from './trace-file';
import { checksTable, traceSummary } from './trace-summary';

const noMixingNote =
  'A trace file keeps the probabilities, not the value vectors, so it cannot show what each key adds to the head output. ' +
  'The attention explorer above computes that live for any ids.';

const tokenKeyNote =
  `On the axes, ${whitespaceKey}; pieces longer than ${maxLabelChars} characters are cut short with an ellipsis (…). ` +
  'The token list above and the readout under the heatmap give each one in full.';

/** The heatmaps' input: the trace's probabilities, its token text made visible (shortened on the axes). */
function attentionRun(trace: OpenedTrace): AttentionRun {
  return {
    config: trace.config,
    tokens: trace.tokens,
    tokenText: trace.token_text?.map((row) => row.map(visibleText)),
    axisText: trace.token_text?.map((row) => row.map(tokenLabel)),
    probabilities: trace.layers.map((l) => l.probabilities),
  };
}

// ---------------------------------------------------------------- a probe's sinks

/** What the sink plot draws: the file's numbers, with the probe's baseline and query range when it records them. */
function sinkData(stats: number[][], probe: ProbeRecord | undefined): SinkData {
  if (probe)
    return {
      stats,
      layerMean: probe.sinks.layer_mean,
      baseline: probe.sinks.uniform_baseline,
      queries: { from: probe.sinks.queries_from, to: probe.sinks.queries_to },
    };
  return { stats, layerMean: stats.map((heads) => heads.reduce((sum, p) => sum + p, 0) / heads.length), baseline: null, queries: null };
}

function sinkCaption(data: SinkData): string {
  const queries = data.queries ? `queries ${data.queries.from} to ${data.queries.to} (the second half of the prompt)` : 'the second half of the queries';
  return (
    `Each dot is one query head: the mean weight that ${queries} put on position 0, the first token. ` +
    "The line joins each layer's mean over its heads. " +
    (data.baseline === null
      ? ''
      : 'The dashed line is what position 0 would get if each of those queries spread its weight evenly over the keys it may read: ' +
        'heads far above it use the first token as a sink, a place to put attention they do not need elsewhere. ') +
    'Click a dot, or press Enter on it, to show that layer and head in the heatmaps below.'
  );
}

// ---------------------------------------------------------------- the widget

export function mountTraceViewer(root: HTMLElement, context: WidgetContext): void {
  const status = el('p', { class: 'status', 'data-testid': 'w8-status' });
  const fileInput = el('input', { type: 'file', accept: '.json,application/json', 'data-testid': 'w8-file' });
  const ownButton = el('button', { type: 'button', class: 'secondary', 'data-testid': 'w8-load-own' }, "Load the page's own trace");
  const dropZone = el(
    'div',
    { class: 'drop-zone' },
    labelled('Trace file (JSON)', fileInput, 'or drop the file onto this widget'),
    ownButton,
  );
  // Which trace the summary, heatmaps and checks below belong to: after a file that failed
  // to open, they are still the previous one's, and this line says so.
  const shownLine = el('p', { class: 'trace-shown', 'data-testid': 'w8-shown', hidden: true });
  const summary = el('div', { class: 'trace-summary', 'data-testid': 'w8-summary', hidden: true });
  let run: AttentionRun | null = null;
  const sinkPlot = new SinkPlot({
    testPrefix: 'w8',
    onSelect: (layer, head) => {
      if (run) view.show(run, { ...view.selection, layer, head });
    },
  });
  const sinkCaptionLine = el('p', { class: 'view-caption' });
  const sinks = el('section', { class: 'trace-sinks', hidden: true }, el('h3', { class: 'view-subtitle' }, 'Attention sinks'), sinkCaptionLine, sinkPlot.root);
  const view = new AttentionView({
    testPrefix: 'w8',
    batchLabel: (b) => `sequence ${b}`,
    noMixingNote,
    onChange: (selection) => sinkPlot.select(selection.layer, selection.head),
  });
  const controls = el('div', { class: 'controls', hidden: true }, ...view.controls);
  const tokenKey = el('p', { class: 'view-caption', 'data-testid': 'w8-token-key', hidden: true }, tokenKeyNote);
  const checks = el('div', { class: 'trace-checks', hidden: true });
  view.root.hidden = true;
  // The sinks come before the controls, so a head picked on the plot shows up just below it;
  // the checks come last: the heatmaps should sit right under their controls.
  const diff = diffDoor(context);
  root.append(dropZone, status, shownLine, summary, sinks, controls, tokenKey, view.root, checks, diff.root);
  setStatus(
    status,
    'No trace open yet. Choose a trace file (JSON) from attn verify --export-trace or attn probe --output, ' +
      'or load the trace the page computes itself; its heatmaps and checks appear here.',
  );
  let shown: string | null = null; // the trace on screen, as the status line named it

  const show = (trace: OpenedTrace, source: string) => {
    const T = trace.tokens[0].length;
    summary.replaceChildren(...traceSummary(trace), ...(trace.probe ? [probeSummary(trace.probe, T)] : []));
    checks.replaceChildren(checksTable(trace.checks, trace.all_checks_passed));
    run = attentionRun(trace);
    view.show(run, view.selection);
    tokenKey.hidden = !trace.token_text;
    sinks.hidden = !trace.sink_stats;
    if (trace.sink_stats) {
      const data = sinkData(trace.sink_stats, trace.probe);
      sinkCaptionLine.textContent = sinkCaption(data);
      sinkPlot.show(data);
      sinkPlot.select(view.selection.layer, view.selection.head);
    }
    for (const node of [shownLine, summary, controls, view.root, checks]) node.hidden = false;
    shown = source;
    shownLine.textContent = `Showing ${source}.`;
    delete shownLine.dataset.kind;
    setStatus(status, `Opened ${source}.`);
  };
  const refuse = (source: string, error: unknown) => {
    const reason = error instanceof TraceFormatError || error instanceof CoreError ? error.message : String(error);
    setStatus(status, `Could not open ${source}: ${reason}${/[.!?]$/.test(reason) ? '' : '.'} ${shown ? `Still showing ${shown}.` : 'No trace is shown.'}`, 'error');
    if (shown) {
      shownLine.textContent = `Still showing the previous trace, ${shown}: ${source} did not open.`;
      shownLine.dataset.kind = 'previous';
    }
  };

  // Opening is asynchronous (a file is read, the module fetched): the reader's last choice
  // wins over one still on its way.
  let latest = 0;
  const openFile = async (file: File) => {
    const request = ++latest;
    try {
      checkTraceSize(file.size);
      const trace = parseTrace(await file.text());
      if (request === latest) show(trace, `${file.name} (${formatFileSize(file.size)})`);
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
      const { loadTraceViewerCore } = await import('../lib/trace-viewer-core');
      // The same defaults as `attn verify`: ids 1..6, batch 2, seed 1.
      const trace = validateTrace((await loadTraceViewerCore()).trace());
      if (request === latest) show(trace, "the page's own trace (wasm core, ids 1–6, batch 2)");
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
