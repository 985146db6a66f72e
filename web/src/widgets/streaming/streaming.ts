// StreamingLLM's experiment on a real model, in the page: a long text decoded one token
// at a time through a KV cache of at most W entries under each eviction policy, against
// recomputing every prediction from the last W tokens. The core's stream_report (the
// code `attn stream` runs) computes it in workers (stream-workers.ts: one runs the three
// caches, all share the reference); this thread only fetches the model and the text, and draws.
//
//   the chart     each policy's loss per position, as the mean over runs of tokens, with
//                 the first eviction and the end of the model's trained positions marked
//                 and labelled
//   the table     the mean loss after the first eviction, and where each policy first
//                 departs from the reference by more than 0.01 nats
//   continuations what each policy's cache makes the model write next (greedy)
//   notes         a window longer than the model's trained positions; a text the model
//                 reads poorly even with the whole window (every policy then about
//                 equally lost)
//
// A run shows the reference's progress and can be stopped; a run that fails clears the
// last one's results, and while a run is under way the last results are greyed. A URL
// asking for more than autoRunTokens tokens waits for Run instead of starting by itself.
//
// URL state: streaming.model, streaming.w, streaming.k, streaming.n (tokens).
import './streaming.css';
import { el, formatNumber, labelled, numberInput, select, setStatus } from '../../lib/dom';
import { markInvalid } from '../../lib/fields';
import { checkpointFiles, fetchBytes, type PolicyName, type StreamModelFiles, type StreamModelInfo, type StreamOptions, type StreamReport } from '../../lib/stream-core';
import type { UrlState } from '../../lib/url-state';
import { groupDigits } from '../../lib/words';
import { LineChart, type ChartSpec } from '../shared/line-chart';
import { binnedLosses, roundTicks } from '../shared/loss-bins';
import { sinkModels } from '../shared/sink-models';
import { StreamStopped, StreamWorkers, type StreamRunResult } from './stream-workers';

interface ModelChoice {
  id: string;
  label: string;
  trainedOn: string;  // what the model read in training, for the note on a text it reads poorly
  files: () => Promise<StreamModelFiles>;
}

/** A folder attn train wrote, shipped under web/public/models/. */
function checkpointChoice(id: string, label: string, dir: string): ModelChoice {
  return { id, label, trainedOn: 'Tiny Shakespeare', files: () => checkpointFiles(dir) };
}

const models: ModelChoice[] = [
  ...sinkModels.map((m) => checkpointChoice(m.id, m.label, m.dir)),
  {
    id: 'stories260K',
    label: 'stories260K (llama2.c, trained on children\'s stories)',
    trainedOn: 'children\'s stories (TinyStories)',
    files: async () => ({
      format: 'llama2c',
      model: await fetchBytes('./models/stories260K/stories260K.bin'),
      tokenizer: await fetchBytes('./models/stories260K/tok512.bin'),
    }),
  },
];

/** The held-out excerpt scripts/build-web.sh writes beside the page: Tiny Shakespeare's last characters, which no model here trained on. */
const heldout = { url: './corpora/shakespeare-heldout.txt.gz', name: 'Tiny Shakespeare\'s held-out tenth' };

async function fetchHeldout(): Promise<string | null> {
  const response = await fetch(heldout.url).catch(() => null);
  if (!response?.ok || !response.body) return null;
  return new Response(response.body.pipeThrough(new DecompressionStream('gzip'))).text();
}

const policyLabel: Record<PolicyName, string> = {
  keep_all: 'keep everything',
  sliding_window: 'sliding window',
  sinks_and_window: 'sinks + window',
  recompute_window: 'recompute the window',
};
const policyClass: Record<PolicyName, string> = {
  keep_all: 'series-keep-all',
  sliding_window: 'series-sliding',
  sinks_and_window: 'series-sinks',
  recompute_window: 'series-recompute',
};

const generateTokens = 40;
const bins = 160;
/** Longer runs start only when Run is pressed: the reference alone is a pass over W tokens for every prediction. */
const autoRunTokens = 5000;
/**
 * A model that loses more than this share of ln V nats per token (V: its vocabulary) even
 * when every window is recomputed reads the text poorly: on the held-out Shakespeare at
 * W = 64, chapter 1's model loses 0.39 of ln 66, stories260K 0.76 of ln 512.
 */
const poorFitShare = 0.6;

export function mountStreaming(root: HTMLElement, { state }: { state: UrlState }): void {
  const modelPicker = select(models.map((m) => [m.id, m.label]), models.some((m) => m.id === state.get('model')) ? state.get('model')! : models[0].id);
  modelPicker.dataset.testid = 'streaming-model';
  const textPicker = select([['heldout', `${heldout.name} (loading)`], ['pasted', 'the text below']], 'heldout');
  textPicker.dataset.testid = 'streaming-source';
  const pasted = el('textarea', { class: 'streaming-text', rows: 3, spellcheck: 'false', 'data-testid': 'streaming-text', placeholder: 'Paste a long text: at least a window and two tokens more' });
  const windowInput = numberInput('number', 2, 512, 1, state.getNumber('w', 64, 2, 512));
  windowInput.dataset.testid = 'streaming-window';
  const sinksInput = numberInput('number', 0, 511, 1, state.getNumber('k', 4, 0, 511));
  sinksInput.dataset.testid = 'streaming-sinks';
  const lengthInput = numberInput('number', 100, 20000, 100, state.getNumber('n', 2000, 100, 20000));
  lengthInput.dataset.testid = 'streaming-length';
  const runButton = el('button', { type: 'button', 'data-testid': 'streaming-run' }, 'Run');
  const stopButton = el('button', { type: 'button', 'data-testid': 'streaming-stop' }, 'Stop');
  const progress = el('progress', { max: 1, value: 0, 'data-testid': 'streaming-progress', 'aria-label': 'the reference\'s predictions computed', title: 'the reference\'s predictions computed' });
  const progressText = el('span', { 'data-testid': 'streaming-progress-text' });
  // Always in place (Stop enabled only while a run is under way), so that the figure below
  // does not move when a run starts or ends.
  const progressRow = el('div', { class: 'streaming-progress' }, progress, progressText, stopButton);
  stopButton.disabled = true;
  progressText.textContent = 'no run yet';
  // Beside the controls: a window longer than the model's training.
  const windowNote = el('p', { class: 'streaming-note', 'data-kind': 'warning', 'data-testid': 'streaming-window-note', 'aria-live': 'polite' });
  windowNote.hidden = true;
  // Above the chart: a text the model reads poorly.
  const fitNote = el('p', { class: 'streaming-note', 'data-kind': 'warning', 'data-testid': 'streaming-fit-note' });
  fitNote.hidden = true;
  const status = el('p', { class: 'status', 'data-testid': 'streaming-status', 'aria-live': 'polite' });
  const chart = new LineChart({
    height: (width) => Math.round(Math.max(220, Math.min(320, width * 0.45))),
    margin: { left: 44, right: 14, top: 16, bottom: 38 },
    // Four lines that meet where the policies agree: their names go in a legend under the axis.
    legendBelow: Infinity,
  });
  chart.root.dataset.testid = 'streaming-chart';
  const table = el('div', { class: 'scroll-x', 'data-testid': 'streaming-table' });
  const summary = el('p', { class: 'view-caption', 'data-testid': 'streaming-summary' });
  const continuations = el('div', { class: 'streaming-continuations', 'data-testid': 'streaming-continuations' });

  root.replaceChildren(
    el('div', { class: 'controls' }, labelled('Model', modelPicker), labelled('Text', textPicker)),
    labelled('Your text', pasted),
    el('div', { class: 'controls' },
      labelled('Window W', windowInput, 'entries the cache holds'),
      labelled('Sinks K', sinksInput, 'first entries kept'),
      labelled('Tokens', lengthInput, 'decoded from the text'),
      runButton),
    windowNote,
    status,
    progressRow,
    fitNote,
    chart.root,
    summary,
    table,
    el('h3', { class: 'view-subtitle' }, `What each cache makes the model write next (${generateTokens} tokens, greedy)`),
    continuations,
  );

  const workers = new StreamWorkers();

  let heldoutText: string | null = null;
  let loadedModel: string | null = null;
  let modelInfo: StreamModelInfo | null = null;  // the loaded model's
  let running = false;
  const results = [chart.root, summary, table, continuations];

  /** The note beside W: said while W exceeds the positions the loaded model was trained on. */
  const showWindowNote = () => {
    const W = windowInput.valueAsNumber;
    const trainedPositions = modelInfo?.context ?? null;
    const past = trainedPositions !== null && Number.isInteger(W) && W > trainedPositions;
    windowNote.hidden = !past;
    windowNote.textContent = past
      ? `W = ${W} is more than the ${trainedPositions} positions this model was trained on (0 to ${trainedPositions! - 1}): ` +
        `before the first eviction every policy, the reference too, reads positions it never saw in training, so all four lose alike.`
      : '';
  };

  /** Greys the last results while a run is under way (they may be another model's). */
  const markStale = (stale: boolean) => {
    for (const node of results) node.toggleAttribute('data-stale', stale);
  };

  /** Removes the last results: a run failed, and they are not what the controls now ask for. */
  const clearResults = () => {
    chart.clear();
    summary.textContent = '';
    table.replaceChildren();
    continuations.replaceChildren();
    fitNote.hidden = true;
    markStale(false);
    delete root.dataset.ms;
    delete root.dataset.policiesMs;
    delete root.dataset.tokens;
  };

  const textNow = () => (textPicker.value === 'heldout' ? heldoutText ?? '' : pasted.value);

  const loadModel = async (): Promise<boolean> => {
    const choice = models.find((m) => m.id === modelPicker.value)!;
    if (loadedModel === choice.id) return true;
    setStatus(status, `Loading ${choice.label}…`);
    let files: StreamModelFiles;
    try {
      files = await choice.files();
    } catch (error) {
      setStatus(status, `Could not fetch ${choice.label}: ${(error as Error).message}.`, 'error');
      return false;
    }
    loadedModel = null;  // the workers drop their model before they read the next one
    modelInfo = null;
    try {
      modelInfo = await workers.load(files);
    } catch (error) {
      setStatus(status, `The core could not read ${choice.label}: ${(error as Error).message}`, 'error');
      return false;
    }
    loadedModel = choice.id;
    showWindowNote();
    return true;
  };

  // The inputs' own ranges (what the figure offers); how the sinks must sit in the window
  // is the core's rule, which the workers check (coreProblem) before a run.
  const inputsValid = (): boolean => {
    const W = windowInput.valueAsNumber, K = sinksInput.valueAsNumber, N = lengthInput.valueAsNumber;
    const wOk = Number.isInteger(W) && W >= 2 && W <= 512;
    const kOk = Number.isInteger(K) && K >= 0 && K <= 511;
    const nOk = Number.isInteger(N) && N >= 100 && N <= 20000;
    markInvalid([windowInput], !wOk);
    markInvalid([sinksInput], !kOk);
    markInvalid([lengthInput], !nOk);
    if (!wOk) setStatus(status, 'The window W is a whole number from 2 to 512.', 'error');
    else if (!kOk) setStatus(status, 'The sinks K are a whole number from 0 to 511.', 'error');
    else if (!nOk) setStatus(status, 'Decode a whole number of tokens from 100 to 20,000.', 'error');
    return wOk && kOk && nOk;
  };

  // The option the core refuses for this run, marked and shown in the core's words; the
  // last figure stays. False when there is none.
  const inputFor = { window: windowInput, sinks: sinksInput, length: lengthInput } as const;
  const coreProblem = async (options: StreamOptions): Promise<boolean> => {
    const problem = await workers.check(options);
    if (!problem) return false;
    if (problem.option !== 'generate') markInvalid([inputFor[problem.option]], true);
    setStatus(status, `${problem.error}.`, 'error');
    return true;
  };

  let again = false;  // the inputs changed while a run was going: run once more with them
  const run = async () => {
    if (!inputsValid()) return;
    if (running) {
      again = true;
      return;
    }
    const text = textNow();
    running = true;
    runButton.disabled = true;
    root.dataset.busy = 'true';
    markStale(true);
    try {
      if (!(await loadModel())) {
        clearResults();
        return;
      }
      const W = windowInput.valueAsNumber, K = sinksInput.valueAsNumber, N = lengthInput.valueAsNumber;
      const options = { text, window: W, sinks: K, length: N, generate: generateTokens };
      if (await coreProblem(options)) {
        markStale(false);  // the figure shown stays, as the settings it was drawn for
        return;
      }
      state.set({ model: modelPicker.value, w: W, k: K, n: N });
      setStatus(status, `Decoding up to ${groupDigits(N)} tokens under four policies…`);
      progress.value = 0;
      progressText.textContent = 'starting';
      stopButton.disabled = false;
      let shownDone = 0;
      try {
        const result = await workers.run(options, (policies) => show(policies),
          (done, total) => {
            shownDone = done;
            progress.max = total;
            progress.value = done;
            progressText.textContent = `${groupDigits(done)} of ${groupDigits(total)} predictions`;
          });
        show(result.report, result);
      } catch (error) {
        loadedModel = workers.broken ? null : loadedModel;  // the next run starts new workers and loads the model again
        if (error instanceof StreamStopped) {
          setStatus(status, `Stopped after ${groupDigits(shownDone)} predictions of the reference: press Run to start again.`);
          markStale(false);  // what was shown (the three caches, if they were done) belongs to these settings
        } else {
          clearResults();
          setStatus(status, `${(error as Error).message}.`, 'error');
        }
      }
    } finally {
      running = false;
      runButton.disabled = false;
      stopButton.disabled = true;
      delete root.dataset.busy;
      if (again) {
        again = false;
        void run();
      }
    }
  };

  const show = (report: StreamReport, whole?: StreamRunResult) => {
    markStale(false);
    root.dataset.policiesMs = report.policies_ms.toFixed(1);
    if (whole) root.dataset.ms = whole.ms.toFixed(1);
    root.dataset.tokens = String(report.tokens);
    const modelLabel = models.find((m) => m.id === loadedModel)!.label;
    setStatus(status, whole
      ? `${groupDigits(report.tokens)} tokens of ${groupDigits(report.text_tokens)} (BOS first) under four policies, computed by the core in ` +
        `${whole.ms.toFixed(0)} ms: the three caches took ${report.policies_ms.toFixed(0)} ms, and the reference, a pass over ` +
        `${report.window} tokens for every prediction, ${groupDigits(Math.round(report.reference_ms))} ms of work` +
        (whole.workers > 1 ? ` shared among ${whole.workers} workers` : '') +
        `. Model: ${modelLabel}, trained on ${groupDigits(report.trained_positions)} positions.`
      : `The three caches took ${report.policies_ms.toFixed(0)} ms; the reference, a pass over the last ${report.window} tokens for every prediction, is on its way…`);
    const complete = whole !== undefined;
    chart.setData(chartSpec(report));
    const byName = Object.fromEntries(report.policies.map((p) => [p.policy, p])) as Partial<Record<PolicyName, StreamReport['policies'][number]>>;
    const mean = (name: PolicyName) => formatNumber(byName[name]!.mean_loss_after_first_eviction, 3);
    const departure = (p: StreamReport['policies'][number]) => p.policy === 'recompute_window' ? 'the reference'
      : !complete ? '…' : p.departs_from_reference_at == null ? 'never' : `at token ${groupDigits(p.departs_from_reference_at + 1)}`;
    table.replaceChildren(el('table', { class: 'data streaming-results' },
      el('caption', {}, `After the first eviction (tokens ${groupDigits(report.window + 1)} to ${groupDigits(report.tokens - 1)}), W = ${report.window}, K = ${report.sinks}`),
      el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'policy'), el('th', { scope: 'col' }, 'mean loss, nats per token'),
        el('th', { scope: 'col' }, `first departs from the reference (by more than ${report.departure_nats} nats)`))),
      el('tbody', {}, ...report.policies.map((p) => el('tr', { 'data-policy': p.policy, 'data-mean': String(p.mean_loss_after_first_eviction) },
        el('th', { scope: 'row' }, policyLabel[p.policy]),
        el('td', {}, formatNumber(p.mean_loss_after_first_eviction, 3)),
        el('td', {}, departure(p)))))));
    const pastTrained = report.tokens > report.trained_positions;
    summary.textContent =
      `Evicting the oldest entries (the sliding window) costs ${mean('sliding_window')} nats per token; keeping the first ${report.sinks} ` +
      `as well costs ${mean('sinks_and_window')}` +
      (complete ? `, against ${mean('recompute_window')} for recomputing each window from scratch. ` : '. ') +
      (pastTrained
        ? `Keeping everything costs ${mean('keep_all')}: its positions run to ${groupDigits(report.tokens - 1)}, past the ${groupDigits(report.trained_positions)} the model was trained on.`
        : `Keeping everything costs ${mean('keep_all')}; its positions stay within the ${groupDigits(report.trained_positions)} the model was trained on.`);
    showFitNote(report, complete);
    continuations.replaceChildren(...report.policies.map((p) => el('p', { 'data-policy': p.policy },
      el('span', { class: `streaming-policy ${policyClass[p.policy]}` }, `${policyLabel[p.policy]}: `),
      el('q', { class: 'streaming-continuation' }, p.continuation?.text ?? ''))));
  };

  /** Said when even the reference, every window recomputed, is closer to guessing than to knowing. */
  const showFitNote = (report: StreamReport, complete: boolean) => {
    const reference = report.policies.find((p) => p.policy === 'recompute_window');
    const vocabulary = modelInfo!.vocab_size;
    const guess = Math.log(vocabulary);
    // A window past the trained positions explains a high loss by itself (the note beside W says so).
    const withinTraining = report.window <= modelInfo!.context;
    const poor = complete && withinTraining && reference !== undefined && reference.mean_loss_after_first_eviction > poorFitShare * guess;
    fitNote.hidden = !poor;
    fitNote.dataset.share = poor ? String(reference!.mean_loss_after_first_eviction / guess) : '';
    if (!poor) return;
    const model = models.find((m) => m.id === loadedModel)!;
    fitNote.textContent =
      `This model reads this text poorly: even recomputing every window it loses ${formatNumber(reference!.mean_loss_after_first_eviction, 3)} nats per token, ` +
      `against ln ${vocabulary} = ${formatNumber(guess, 3)} for guessing evenly among its ${groupDigits(vocabulary)} tokens. It was trained on ${model.trainedOn}. ` +
      `Every policy is about as lost, so their differences here say little about eviction; try a text like the one it was trained on.`;
  };

  stopButton.addEventListener('click', () => workers.stop());
  windowInput.addEventListener('input', showWindowNote);
  modelPicker.addEventListener('change', () => void run());
  textPicker.addEventListener('change', () => {
    pasted.closest('div')!.hidden = textPicker.value !== 'pasted';
    if (textPicker.value === 'heldout') void run();
  });
  runButton.addEventListener('click', () => void run());
  for (const input of [windowInput, sinksInput, lengthInput]) input.addEventListener('change', () => void run());
  pasted.closest('div')!.hidden = true;

  void fetchHeldout().then((text) => {
    heldoutText = text;
    textPicker.options[0].textContent = text === null
      ? `${heldout.name} (not in this copy of the page)`
      : `${heldout.name}, ${groupDigits(text.length)} characters`;
    if (text === null) {
      textPicker.options[0].disabled = true;
      textPicker.value = 'pasted';
      pasted.closest('div')!.hidden = false;
      setStatus(status, 'This copy of the page was built without the held-out excerpt (scripts/build-web.sh writes it when the corpus is beside the project): paste a text.');
      return;
    }
    const N = lengthInput.valueAsNumber;
    if (Number.isInteger(N) && N > autoRunTokens) {
      setStatus(status, `Press Run to decode ${groupDigits(N)} tokens: a run this long takes a while (it shows its progress, and Stop ends it).`);
      return;
    }
    void run();
  });
}

/** The order the chart draws the policies in, bottom first (streaming.css says why). */
const drawingOrder: PolicyName[] = ['recompute_window', 'sinks_and_window', 'sliding_window', 'keep_all'];

function chartSpec(report: StreamReport): ChartSpec {
  const drawn = drawingOrder.flatMap((name) => report.policies.filter((p) => p.policy === name));
  const series = drawn.map((p) => ({
    name: policyLabel[p.policy],
    points: binnedLosses(p.losses, bins).map(([end, loss]) => [end, loss] as [number, number]),
    className: policyClass[p.policy],
    id: p.policy,
  }));
  const values = series.flatMap((s) => s.points.map(([, y]) => y));
  const top = Math.max(1, Math.ceil(Math.max(...values)));
  const N = report.tokens - 1;
  // Position W is the first prediction after an eviction; position P (the trained
  // positions) the first the model never saw in training.
  const markers = [{ x: report.first_eviction_at, label: report.first_eviction_at === report.trained_positions
    ? `${report.window}: first eviction; training ends`
    : `${report.window}: first eviction (W)` }];
  if (report.trained_positions !== report.first_eviction_at && report.trained_positions < N)
    markers.push({ x: report.trained_positions, label: `${report.trained_positions}: training ends` });
  const means = report.policies.map((p) => `${policyLabel[p.policy]} ${formatNumber(p.mean_loss_after_first_eviction, 2)}`).join(', ');
  return {
    label: `Loss per token against position for ${groupDigits(report.tokens)} tokens, W = ${report.window}, K = ${report.sinks}. ` +
      `Mean after the first eviction: ${means} nats per token.`,
    x: { title: 'position (token)', domain: [0, N], ticks: (pixels) => roundTicks(N, pixels < 422 ? 2 : 5).map((at) => ({ at, label: groupDigits(at) })) },
    y: { title: 'nats per token', domain: [0, top], ticks: () => Array.from({ length: top + 1 }, (_, i) => ({ at: i, label: String(i) })) },
    series,
    markers,
  };
}
