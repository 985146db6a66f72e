// live-training's panel, loaded when the reader opens the trainer: the controls, the speed
// readout, the loss plot, two heads' attention on a probe text and every head's
// pattern scores, all redrawn as the worker (live-training-worker.ts) reports.
// This thread never runs a training step: it posts requests and draws what comes
// back, at most once per animation frame.
import { el, formatNumber, labelled, select, setStatus } from '../../lib/dom';
import { sequential } from '../../lib/colormap';
import { Heatmap, HeatmapData } from '../../lib/heatmap';
import type { HeadPatterns, TrainingInfo, TrainingOptions } from '../../lib/train-core';
import type { WidgetContext } from '../../lib/widget';
import { count } from '../../lib/words';
import type { ProbeAttention, TrainerMessage, TrainerRequest } from './live-training-protocol';
import { LossCurve } from '../shared/loss-curve';
import { groupDigits } from '../../lib/words';
import { namedText, tokenLabel, whitespaceKey } from '../shared/token-text';

// The run the widget starts: smaller steps than attn train's (16 windows, not 64), so
// Pause answers within a step of about 30 ms, and half of them repeated random strings.
// Measured in headless Chromium on the 2-core build machine while other work ran
// (web/bench/live-training.mjs, 20,000 to 38,000 tokens per second): the best
// previous-token score passed 0.5 near step 1,000 (30 to 42 s of training), and a
// layer-1 head drew the induction stripe on the probe text (mean weight 0.5 or more on
// the key 11 back) from about step 1,600 to 1,800 (50 to 75 s). With the same module in
// Node, batch 32 with a quarter of the windows repeated took about 500 and 1,750 steps
// of twice the size, and batch 16 with none repeated drew no stripe in 3,000 steps.
export const trainingOptions: TrainingOptions = {
  seed: 1,
  steps: 8000,
  context: 64,
  batch: 16,
  lr: 1e-2,
  warmup: 100,
  repeat_fraction: 0.5,
  hidden_size: 32,
};

// BOS, a line of text, then 12 random letters written twice: the line shows a
// previous-token head's diagonal, the second copy an induction head's stripe (each
// letter reads the one after its earlier occurrence, 11 keys back).
const defaultProbe = 'To be, or not to be: xqbzmvkjwdpfxqbzmvkjwdpf';
const repeatChoices: [string, string][] = [
  ['0', 'none'],
  ['0.1', '10% of windows'],
  ['0.25', '25% of windows'],
  ['0.5', '50% of windows'],
];
const pasteHint = 'any text of a few thousand characters or more; its last tenth is held out';

type Phase = 'idle' | 'starting' | 'running' | 'paused' | 'finished';
type Pick = 'previous_token' | 'induction' | `${number}.${number}`;
const patternLabel = { previous_token: 'previous-token', induction: 'induction' } as const;

/** The worker, started when the panel's code loads (it fetches and compiles the wasm). */
let spare: Worker | null = null;
function takeWorker(): Worker {
  const worker = spare ?? new Worker(new URL('./live-training-worker.ts', import.meta.url), { type: 'module', name: 'live training' });
  spare = null;
  return worker;
}

/** Starts the worker and its module loading before the reader clicks (the door calls it on hover or focus). */
export function preload(): void {
  spare ??= takeWorker();
}

/** Where the page build puts the training text when ../shared/corpora has it (scripts/build-web.sh). */
const excerpt = {
  name: 'Tiny Shakespeare',
  url: './corpora/shakespeare-excerpt.txt.gz',
};

/** The excerpt's text, or null when this copy of the page was built without it. */
async function fetchExcerpt(): Promise<string | null> {
  const response = await fetch(excerpt.url).catch(() => null);
  if (!response?.ok || !response.body) return null;
  // Stored gzipped (scripts/build-web.sh), whatever the server's own compression.
  return new Response(response.body.pipeThrough(new DecompressionStream('gzip'))).text();
}

/** One head's probabilities on the probe text, for the shared Heatmap. */
function headData(attention: ProbeAttention, layer: number, head: number): HeatmapData {
  const p = attention.probs[layer][head];
  const label = (t: number) => (t === 0 ? '"BOS"' : namedText(attention.labels[t]));
  const causal = (r: number, c: number) => c <= r;
  return {
    rows: p.length,
    cols: p.length,
    value: (r, c) => p[r][c],
    allowed: causal,
    rowLabel: (r) => (r === 0 ? 'BOS' : tokenLabel(attention.labels[r])),
    colLabel: (c) => (c === 0 ? 'BOS' : tokenLabel(attention.labels[c])),
    scale: sequential(0, 1),
    domain: [0, 1],
    describe: (r, c) =>
      `layer ${layer}, head ${head}, query ${r} (${label(r)}) → key ${c} (${label(c)})` +
      (causal(r, c) ? `: p = ${formatNumber(p[r][c])}` : `: masked, key ${c} comes after query ${r}`),
  };
}

class HeadPanel {
  readonly picker: HTMLSelectElement;
  readonly heatmap: Heatmap;
  readonly root: HTMLElement;
  private readonly caption = el('p', { class: 'view-caption' });

  constructor(readonly id: string, auto: 'previous_token' | 'induction', onPick: () => void) {
    this.picker = select([[auto, `the ${auto === 'previous_token' ? 'first' : 'last'} layer's strongest ${patternLabel[auto]} head`]], auto);
    this.picker.dataset.testid = `live-training-pick-${id}`;
    this.picker.addEventListener('change', onPick);
    this.heatmap = new Heatmap({ title: 'Attention probabilities', rowAxis: 'query position', colAxis: 'key position', maxCellPx: 16 });
    this.heatmap.root.dataset.testid = `live-training-heatmap-${id}`;
    this.root = el('section', { class: 'live-head' }, this.caption, this.heatmap.root);
  }

  /** The picker's options: the automatic choice, then every head. */
  fill(layers: number, heads: number): void {
    if (this.picker.options.length === 1 + layers * heads) return;
    const value = this.picker.value;
    const auto = this.picker.options[0];
    this.picker.replaceChildren(auto);
    for (let l = 0; l < layers; l++)
      for (let h = 0; h < heads; h++) this.picker.append(el('option', { value: `${l}.${h}` }, `layer ${l}, head ${h}`));
    this.picker.value = [...this.picker.options].some((option) => option.value === value) ? value : auto.value;
  }

  /** The head shown: the picked one, or the strongest for the automatic choice (null before any scores). */
  resolve(patterns: HeadPatterns | null): { layer: number; head: number; why: string } | null {
    const pick = this.picker.value as Pick;
    if (pick !== 'previous_token' && pick !== 'induction') {
      const [layer, head] = pick.split('.').map(Number);
      return { layer, head, why: 'your choice' };
    }
    const scores = patterns?.patterns.find((p) => p.name === pick);
    if (!scores) return null;
    // A previous-token head in the first layer, an induction head in the last: an
    // induction head reads keys that an earlier layer has marked with their previous token.
    const layer = pick === 'previous_token' ? 0 : scores.heads.length - 1;
    const row = scores.heads[layer];
    const head = row.indexOf(Math.max(...row));
    return { layer, head, why: `layer ${layer}'s strongest ${patternLabel[pick]} head now, score ${row[head].toFixed(2)}` };
  }

  show(attention: ProbeAttention | null, patterns: HeadPatterns | null, steps: number): void {
    const chosen = this.resolve(patterns);
    const root = this.heatmap.root;
    if (!attention || !chosen) {
      this.caption.textContent = attention ? 'No head scores yet: the strongest head is not known.' : '';
      root.hidden = true;
      delete root.dataset.probabilities;
      return;
    }
    root.hidden = false;
    const { layer, head, why } = chosen;
    this.caption.textContent = `Layer ${layer}, head ${head} (${why}), after ${count(steps, 'step')}`;
    // The two panels may show the same head: their buttons name the side ("the left heatmap, layer 1, head 2").
    this.heatmap.setTitle(`Layer ${layer}, head ${head} after ${count(steps, 'step')}: attention probabilities`,
      `the ${this.id === 'a' ? 'left' : 'right'} heatmap, layer ${layer}, head ${head}`);
    this.heatmap.setData(headData(attention, layer, head));
    root.dataset.layer = String(layer);
    root.dataset.head = String(head);
    root.dataset.steps = String(steps);
    root.dataset.probabilities = JSON.stringify(attention.probs[layer][head]);
  }
}

export async function startLiveTraining(root: HTMLElement, context: WidgetContext): Promise<void> {
  const worker = takeWorker();
  const o = trainingOptions;
  const excerptText = await fetchExcerpt();

  // ---------------------------------------------------------------- controls
  const source = select(
    [
      ['excerpt', excerptText === null ? `${excerpt.name} (not in this copy of the page)` : `${excerpt.name}, the first ${groupDigits(excerptText.length)} characters`],
      ['pasted', 'the text below'],
    ],
    excerptText === null ? 'pasted' : 'excerpt',
  );
  source.dataset.testid = 'live-training-source';
  if (excerptText === null) source.options[0].disabled = true;
  const pasted = el('textarea', { class: 'live-text', rows: 3, spellcheck: 'false', 'data-testid': 'live-training-text', placeholder: 'Paste a text to train on' });
  const repeats = select(repeatChoices, String(trainingOptions.repeat_fraction));
  repeats.dataset.testid = 'live-training-repeats';
  const startButton = el('button', { type: 'button', 'data-testid': 'live-training-start' }, 'Start');
  const pauseButton = el('button', { type: 'button', class: 'secondary', 'data-testid': 'live-training-pause' }, 'Pause');
  const resetButton = el('button', { type: 'button', class: 'secondary', 'data-testid': 'live-training-reset' }, 'Reset');
  const probe = el('input', { type: 'text', class: 'live-probe', spellcheck: 'false', maxlength: trainingOptions.context - 1, 'data-testid': 'live-training-probe' });
  const status = el('p', { class: 'status', 'data-testid': 'live-training-status' });
  const speed = el('p', { class: 'live-speed', 'data-testid': 'live-training-speed', 'aria-live': 'off' });
  const chart = new LossCurve('live-training-loss-chart');
  const probeNote = el('p', { class: 'status', 'data-testid': 'live-training-probe-status' });
  const milestones = el('ul', { class: 'live-milestones', 'data-testid': 'live-training-milestones' });
  const scores = el('div', { class: 'scroll-x', tabindex: 0, role: 'region', 'aria-label': 'every head\'s pattern scores', 'data-testid': 'live-training-scores' });
  const scoresNote = el('p', { class: 'status', 'data-testid': 'live-training-scores-status' });
  const scoresCaption = el('p', { class: 'view-caption', 'data-testid': 'live-training-scores-caption' });
  const describeScores = (induction: number | null) => {
    scoresCaption.textContent =
      `The core's measurements of the model as it is (lessons/head_patterns.hpp). Previous token: the mean weight on the key just before the query, ` +
      `over ${o.context} positions of held-out text. Induction: on BOS and a random string of ${induction ?? 'R'} characters written twice, the mean ` +
      `weight the second copy puts on the key just after the current character's earlier occurrence. Sink: the mean weight the second half of the ` +
      `queries put on BOS. Scores at or above the core's threshold are marked.`;
  };
  describeScores(null);
  const panels = [new HeadPanel('a', 'previous_token', () => pickChanged()), new HeadPanel('b', 'induction', () => pickChanged())];

  const excerptNote = excerptText === null
    ? `This copy of the page was built without the ${excerpt.name} excerpt (scripts/build-web.sh writes it when the corpus is beside the project), so it trains on pasted text only.`
    : null;
  root.replaceChildren(
    el(
      'p',
      { class: 'view-caption', 'data-testid': 'live-training-settings' },
      `Our tiny model (width ${o.hidden_size}) from random weights (seed ${o.seed}), with the training text's characters as its vocabulary: ` +
        `each step is ${o.batch} windows of BOS and ${o.context - 1} characters, AdamW at a peak rate of ${o.lr} after ${o.warmup} warm-up steps, ` +
        `decaying to a tenth of it at step ${groupDigits(o.steps)}, where the run stops. It runs in Web Workers, off the page's thread: the 16 windows are two shards of 8, ` +
        `computed at once on two cores where your machine has them and added in a fixed order, so the numbers do not depend on how many.`,
    ),
    el('div', { class: 'controls' }, labelled('Train on', source), labelled('Repeated random strings', repeats), startButton, pauseButton, resetButton),
    ...(excerptNote ? [el('p', { class: 'view-caption', 'data-testid': 'live-training-no-excerpt' }, excerptNote)] : []),
    labelled('Your text', pasted, pasteHint),
    status,
    speed,
    chart.root,
    el('p', { class: 'view-caption', 'data-testid': 'live-training-loss-caption' },
      'Why the training loss can sit above the held-out loss: the training windows include the repeated random strings, ' +
        'and until an induction head forms the model can only guess their characters, close to the even guess; the held-out ' +
        'loss is measured on ordinary text alone. Once the model copies the second copy from the first, those windows become ' +
        'the easiest, and the training loss falls below it.'),
    el('h3', { class: 'view-subtitle' }, 'Two heads on a probe text'),
    el('div', { class: 'controls' }, labelled('Probe text', probe, `BOS is added in front; at most ${o.context - 1} characters`), labelled('Left', panels[0].picker), labelled('Right', panels[1].picker)),
    probeNote,
    el('div', { class: 'panels live-heads' }, panels[0].root, panels[1].root),
    el('p', { class: 'view-caption' }, `On the axes, ${whitespaceKey}.`),
    el('h3', { class: 'view-subtitle' }, 'Every head, measured as it trains'),
    scoresCaption,
    scoresNote,
    milestones,
    scores,
  );

  // ---------------------------------------------------------------- state
  let phase: Phase = 'idle';
  let run = 0;
  let info: TrainingInfo | null = null;
  let losses: number[] = [];
  let heldout: [number, number][] = [];
  let stepsDone = 0, runningMs = 0, tokensPerSecond = 0;
  let patterns: HeadPatterns | null = null;
  let attention: ProbeAttention | null = null;
  let attentionSteps = 0;
  // When the best score of each pattern first reached the core's mark (the threshold every
  // score on the page uses): [step, seconds].
  const marked = ['previous_token', 'induction'] as const;
  let reached: Partial<Record<(typeof marked)[number], [number, number]>> = {};

  const send = (request: TrainerRequest) => worker.postMessage(request);

  // ---------------------------------------------------------------- drawing (once per frame)
  let drawPending = false;
  const lastDrawn = { readout: -Infinity, chart: -Infinity };
  const dirty = { chart: false, heads: false, scores: false, readout: false };
  const redraw = (parts: Partial<typeof dirty>) => {
    Object.assign(dirty, parts);
    if (drawPending) return;
    drawPending = true;
    requestAnimationFrame(() => {
      drawPending = false;
      const start = performance.now();
      if (dirty.readout) drawReadout();
      if (dirty.chart) chart.setData({ losses, heldout, characters: info ? info.vocab_size - 1 : null, steps: trainingOptions.steps });
      if (dirty.heads) panels.forEach((panel) => panel.show(attention, patterns, attentionSteps));
      if (dirty.scores) drawScores();
      Object.assign(dirty, { chart: false, heads: false, scores: false, readout: false });
      // How long this thread spent drawing, for tests and the curious: the last frame's and the longest.
      const ms = performance.now() - start;
      root.dataset.drawMs = ms.toFixed(2);
      root.dataset.drawMsMax = Math.max(ms, Number(root.dataset.drawMsMax ?? 0)).toFixed(2);
    });
  };

  const drawReadout = () => {
    speed.dataset.steps = String(stepsDone);
    speed.dataset.tokensPerSecond = tokensPerSecond.toFixed(0);
    speed.dataset.runningMs = runningMs.toFixed(0);
    // The first steps' losses exactly, for the test that holds them to a run of one worker.
    speed.dataset.firstLosses = JSON.stringify(losses.slice(0, 20));
    speed.textContent = phase === 'idle' || phase === 'starting'
      ? 'Step 0.'
      : `Step ${groupDigits(stepsDone)} of ${groupDigits(trainingOptions.steps)}, ${(runningMs / 1000).toFixed(1)} s of training` +
        (tokensPerSecond > 0 ? `, ${groupDigits(tokensPerSecond)} tokens per second (${groupDigits(tokensPerSecond / (o.batch * o.context))} steps per second)` : '') + '.';
  };

  const drawScores = () => {
    if (!patterns) {
      scores.replaceChildren();
      milestones.replaceChildren();
      return;
    }
    const shown = ['previous_token', 'induction', 'first_token'] as const;
    const columns = { previous_token: 'previous token', induction: 'induction', first_token: 'sink (BOS)' };
    const byName = (name: string) => patterns!.patterns.find((p) => p.name === name)!;
    const L = byName('previous_token').heads.length, H = byName('previous_token').heads[0].length;
    const rows = [];
    for (let l = 0; l < L; l++)
      for (let h = 0; h < H; h++)
        rows.push(
          el(
            'tr',
            { 'data-layer': l, 'data-head': h },
            el('th', { scope: 'row' }, `layer ${l}, head ${h}`),
            ...shown.map((name) => {
              const score = byName(name).heads[l][h];
              return el('td', score >= patterns!.threshold ? { class: 'strong', 'data-pattern': name } : { 'data-pattern': name }, score.toFixed(2));
            }),
          ),
        );
    scores.replaceChildren(
      el(
        'table',
        { class: 'pattern-table' },
        el('caption', {}, `After ${count(attentionSteps, 'step')}; marked: ${formatNumber(patterns.threshold, 2)} or more`),
        el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'head'), ...shown.map((name) => el('th', { scope: 'col' }, columns[name])))),
        el('tbody', {}, ...rows),
      ),
    );
    milestones.replaceChildren(
      ...marked.map((name) => {
        const best = byName(name).strongest;
        const when = reached[name];
        const item = el(
          'li',
          when ? { 'data-pattern': name, 'data-step': when[0], 'data-seconds': when[1].toFixed(1) } : { 'data-pattern': name },
          when
            ? `The best ${patternLabel[name]} score was first measured at ${patterns!.threshold} or more at step ${groupDigits(when[0])}, after ${when[1].toFixed(1)} s of training; ` +
                `now layer ${best.layer}, head ${best.head} at ${best.score.toFixed(2)}.`
            : `No ${patternLabel[name]} score has reached ${patterns!.threshold} yet; the best is layer ${best.layer}, head ${best.head} at ${best.score.toFixed(2)} ` +
                `(spreading evenly would give ${byName(name).uniform_baseline.toFixed(2)}).`,
        );
        return item;
      }),
    );
  };

  // ---------------------------------------------------------------- phases
  const setPhase = (next: Phase) => {
    phase = next;
    root.dataset.phase = next;
    startButton.textContent = next === 'paused' ? 'Continue' : 'Start';
    startButton.disabled = next === 'running' || next === 'starting' || next === 'finished';
    pauseButton.disabled = next !== 'running';
    resetButton.disabled = next === 'idle';
    // The text and the mix belong to a run: they change after Reset.
    source.disabled = repeats.disabled = pasted.disabled = next !== 'idle';
    redraw({ readout: true });
  };

  const clear = () => {
    info = null;
    losses = [];
    heldout = [];
    stepsDone = runningMs = tokensPerSecond = 0;
    patterns = attention = null;
    attentionSteps = 0;
    reached = {};
    scoresNote.textContent = '';
    probeNote.textContent = '';
    redraw({ chart: true, heads: true, scores: true, readout: true });
  };

  const showAttention = (value: ProbeAttention | { error: string }, steps: number) => {
    if ('error' in value) {
      setStatus(probeNote, `The probe text: ${value.error}. Edit it to use characters of the training text.`, 'error');
      attention = null;
    } else {
      probeNote.textContent = '';
      probeNote.removeAttribute('role');
      attention = value;
      attentionSteps = steps;
      panels.forEach((panel) => panel.fill(value.probs.length, value.probs[0].length));
    }
    redraw({ heads: true });
  };

  const onMessage = (message: TrainerMessage) => {
    if (message.kind === 'ready') return;
    if (message.run !== run) return; // from a run that was reset
    switch (message.kind) {
      case 'started':
        info = message.info;
        setPhase('running');
        setStatus(
          status,
          `Training on ${groupDigits(info.train_characters)} characters (${info.vocab_size - 1} distinct, plus BOS), ` +
            `holding out the last ${groupDigits(info.heldout_characters)}: ${groupDigits(info.parameters)} parameters to learn` +
            (message.workers > 1 ? `, each step shared between ${message.workers} workers.` : '.'),
        );
        speed.dataset.workers = String(message.workers);
        break;
      case 'progress': {
        losses.push(...message.losses);
        ({ stepsDone, tokensPerSecond, runningMs } = message);
        // Chunks arrive about 25 times a second: the readout follows at most 10 times a
        // second and the plot 4 times (a plot's redraw costs milliseconds, and the last
        // chunk's losses reach it with the next measurement anyway).
        const now = performance.now();
        const readout = now - lastDrawn.readout >= 100, plot = now - lastDrawn.chart >= 250;
        if (readout) lastDrawn.readout = now;
        if (plot) lastDrawn.chart = now;
        if (readout || plot) redraw({ chart: plot, readout });
        break;
      }
      case 'measured': {
        ({ runningMs, stepsDone } = message);
        if (!heldout.length || heldout[heldout.length - 1][0] !== message.stepsDone) heldout.push([message.stepsDone, message.heldoutLoss]);
        if ('error' in message.patterns) {
          patterns = null;
          setStatus(scoresNote, `The core cannot score the heads on this text: ${message.patterns.error}`, 'error');
        } else {
          patterns = message.patterns;
          describeScores(patterns.induction_length);
          for (const name of marked) {
            const best = patterns.patterns.find((p) => p.name === name)!.strongest.score;
            if (!reached[name] && best >= patterns.threshold) reached[name] = [message.stepsDone, message.runningMs / 1000];
          }
        }
        showAttention(message.attention, message.stepsDone);
        redraw({ chart: true, scores: true, readout: true });
        break;
      }
      case 'attention':
        showAttention(message.attention, message.stepsDone);
        break;
      case 'paused':
        stepsDone = message.stepsDone;
        setPhase('paused');
        setStatus(status, `Paused after ${count(message.stepsDone, 'step')}.`);
        break;
      case 'finished':
        setPhase('finished');
        setStatus(status, `Done: the schedule's ${count(message.stepsDone, 'step')}. Reset to train again.`);
        break;
      case 'error':
        // start() refused the text or the settings: nothing runs, the controls stay usable.
        setPhase(info ? 'paused' : 'idle');
        setStatus(status, `The core refused this: ${message.message}`, 'error');
        break;
    }
  };
  worker.addEventListener('message', (event: MessageEvent<TrainerMessage>) => onMessage(event.data));
  worker.addEventListener('error', (event) => {
    event.preventDefault();
    setPhase('idle');
    setStatus(status, `The training worker stopped: ${event.message || 'it failed to load'}`, 'error');
  });

  startButton.addEventListener('click', () => {
    if (phase === 'paused') {
      setPhase('running');
      setStatus(status, `Training from step ${groupDigits(stepsDone)}.`);
      send({ kind: 'resume', run });
      return;
    }
    if (phase !== 'idle') return;
    const text = source.value === 'excerpt' && excerptText !== null ? excerptText : pasted.value;
    run += 1;
    clear();
    setPhase('starting');
    setStatus(status, 'Starting: building the vocabulary and the first weights…');
    const options = { ...trainingOptions, repeat_fraction: Number(repeats.value) };
    speed.dataset.options = JSON.stringify(options);
    send({ kind: 'start', run, text, options, probe: probe.value });
    context.state.set({ source: source.value === 'excerpt' ? null : source.value, repeats: repeats.value === String(trainingOptions.repeat_fraction) ? null : repeats.value });
  });
  pauseButton.addEventListener('click', () => {
    if (phase !== 'running') return;
    // The button answers at once; the worker confirms after its current chunk.
    pauseButton.disabled = true;
    setStatus(status, 'Pausing…');
    send({ kind: 'pause', run });
  });
  resetButton.addEventListener('click', () => {
    send({ kind: 'reset', run });
    run += 1; // whatever the old run still sends is dropped
    clear();
    setPhase('idle');
    setStatus(status, 'Reset: press Start to train from random weights again.');
  });
  source.addEventListener('change', () => {
    if (source.value === 'pasted') pasted.focus();
  });
  pasted.addEventListener('input', () => {
    if (source.value !== 'pasted') source.value = 'pasted';
  });

  let probeTimer = 0;
  probe.addEventListener('input', () => {
    clearTimeout(probeTimer);
    probeTimer = window.setTimeout(() => {
      context.state.set({ probe: probe.value === defaultProbe ? null : probe.value });
      if (info) send({ kind: 'probe', run, probe: probe.value });
    }, 150);
  });
  const pickChanged = () => {
    context.state.set({ left: panels[0].picker.value === 'previous_token' ? null : panels[0].picker.value, right: panels[1].picker.value === 'induction' ? null : panels[1].picker.value });
    redraw({ heads: true });
  };

  // ---------------------------------------------------------------- from the URL
  probe.value = context.state.get('probe') ?? defaultProbe;
  const fromUrl = (node: HTMLSelectElement, value: string | null) => {
    if (value !== null && [...node.options].some((option) => option.value === value && !option.disabled)) node.value = value;
  };
  fromUrl(source, context.state.get('source'));
  fromUrl(repeats, context.state.get('repeats'));
  for (const [panel, name] of [[panels[0], 'left'], [panels[1], 'right']] as const) {
    const value = context.state.get(name);
    if (value !== null && /^\d+\.\d+$/.test(value)) {
      panel.picker.append(el('option', { value }, `layer ${value.split('.')[0]}, head ${value.split('.')[1]}`));
      panel.picker.value = value;
    }
  }
  setPhase('idle');
  setStatus(status, excerptText === null ? 'Paste a text, then press Start.' : 'Press Start to train from random weights.');
  clear();
}
