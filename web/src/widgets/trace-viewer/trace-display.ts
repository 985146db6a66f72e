// The trace viewer's display: a trace's summary, its probe's summary and sink
// plot, the explorer's heatmaps over its probabilities and its check records. Loaded
// by trace-viewer.ts when the reader first opens a trace, so a chapter scrolled
// through without opening one fetches none of it.
import { el } from '../../lib/dom';
import { AttentionRun, AttentionView } from '../shared/attention-view';
import { probeSummary } from './probe-summary';
import { SinkData, SinkPlot } from './sink-plot';
import { maxLabelChars, whitespaceKey } from '../shared/token-text';
import { checkTraceSize, OpenedTrace, parseTrace, ProbeRecord, validateTrace } from './trace-file';
import { checksTable, traceSummary } from './trace-summary';

export { checkTraceSize, parseTrace, validateTrace };

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
    tokenText: trace.token_text,
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

// ---------------------------------------------------------------- the display

export class TraceDisplay {
  /** The summary, sinks, controls, token key, heatmaps and checks, in that order, hidden until a trace is shown. */
  readonly nodes: HTMLElement[];
  private readonly summary = el('div', { class: 'trace-summary', 'data-testid': 'trace-viewer-summary', hidden: true });
  private readonly sinkCaptionLine = el('p', { class: 'view-caption' });
  private readonly sinkPlot: SinkPlot;
  private readonly sinks: HTMLElement;
  private readonly view: AttentionView;
  private readonly controls: HTMLElement;
  private readonly tokenKey = el('p', { class: 'view-caption', 'data-testid': 'trace-viewer-token-key', hidden: true }, tokenKeyNote);
  private readonly checks = el('div', { class: 'trace-checks', hidden: true });
  private run: AttentionRun | null = null;

  constructor() {
    this.sinkPlot = new SinkPlot({
      testPrefix: 'trace-viewer',
      onSelect: (layer, head) => {
        if (this.run) this.view.show(this.run, { ...this.view.selection, layer, head });
      },
    });
    this.sinks = el('section', { class: 'trace-sinks', hidden: true }, el('h3', { class: 'view-subtitle' }, 'Attention sinks'), this.sinkCaptionLine, this.sinkPlot.root);
    this.view = new AttentionView({
      testPrefix: 'trace-viewer',
      batchLabel: (b) => `sequence ${b}`,
      noMixingNote,
      onChange: (selection) => this.sinkPlot.select(selection.layer, selection.head),
    });
    this.controls = el('div', { class: 'controls', hidden: true }, ...this.view.controls);
    this.view.root.hidden = true;
    // The sinks come before the controls, so a head picked on the plot shows up just below it;
    // the checks come last: the heatmaps should sit right under their controls.
    this.nodes = [this.summary, this.sinks, this.controls, this.tokenKey, this.view.root, this.checks];
  }

  show(trace: OpenedTrace): void {
    const T = trace.tokens[0].length;
    this.summary.replaceChildren(...traceSummary(trace), ...(trace.probe ? [probeSummary(trace.probe, T)] : []));
    this.checks.replaceChildren(checksTable(trace.checks, trace.all_checks_passed));
    this.run = attentionRun(trace);
    this.view.show(this.run, this.view.selection);
    this.tokenKey.hidden = !trace.token_text;
    this.sinks.hidden = !trace.sink_stats;
    if (trace.sink_stats) {
      const data = sinkData(trace.sink_stats, trace.probe);
      this.sinkCaptionLine.textContent = sinkCaption(data);
      this.sinkPlot.show(data);
      this.sinkPlot.select(this.view.selection.layer, this.view.selection.head);
    }
    for (const node of [this.summary, this.controls, this.view.root, this.checks]) node.hidden = false;
  }
}
