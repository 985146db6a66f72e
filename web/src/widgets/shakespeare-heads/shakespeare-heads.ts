// The Shakespeare figures: what the heads of the model we trained on Shakespeare learned
// (web/public/models/shakespeare/, made by `attn train`; its record is
// training.json). Each figure computes its numbers live with the core, on the
// shipped weights, through lib/checkpoint-core.ts:
//   previous-token-head a previous-token head on the reader's text
//   induction-head an induction head on a random string written twice
//   first-token-weight whether a sink forms on the first token, beside a trained Qwen3's figures
//   loss-and-continuation the loss the model reached, the loss on the reader's text, and what it writes
// The weights and the module load when a figure comes near the viewport (or on a
// click), so the chapter's first load carries none of it.
import type { Checkpoint } from '../../lib/checkpoint-core';
import { sequential } from '../../lib/colormap';
import { el, formatNumber, labelled, select, setStatus, wide } from '../../lib/dom';
import { Heatmap, HeatmapData } from '../../lib/heatmap';
import type { PatternScores } from '../../lib/trained-core';
import type { WidgetContext } from '../../lib/widget';
import { inBackgroundTask } from '../../lib/background-task';
import { count, groupDigits } from '../../lib/words';
import { namedText, tokenLabel } from '../shared/token-text';
import { qwen3Sinks } from '../shared/sink-models';

const defaultText = 'ROMEO:\nBut soft, what light through yonder window breaks?';

/** Opens the shipped checkpoint when `root` comes within a screen of the viewport, or at once. */
function whenNear(root: HTMLElement, status: HTMLElement, use: (checkpoint: Checkpoint) => void): void {
  let started = false;
  const start = () => {
    if (started) return;
    started = true;
    observer?.disconnect();
    setStatus(status, 'Loading the model trained on Shakespeare…');
    import('../../lib/checkpoint-core')
      // The four figures share one checkpoint: opening it, and then each figure's work,
      // run in background tasks of their own, so a click elsewhere (say, opening trained-model)
      // does not wait for them.
      .then(({ openShakespeare }) => openShakespeare('background'))
      .then(inBackgroundTask)
      .then(use, (error: unknown) => {
        started = false;
        setStatus(status, `Could not load the trained model: ${error instanceof Error ? error.message : String(error)}`, 'error');
      });
  };
  const observer = 'IntersectionObserver' in window
    ? new IntersectionObserver((entries) => entries.some((e) => e.isIntersecting) && start(), { rootMargin: '100% 0px' })
    : null;
  if (observer) observer.observe(root);
  else start();
  root.addEventListener('pointerdown', start, { once: true });
}

/** One head's probabilities [T][T] over the core's labels ("BOS", then each character as it is), as a heatmap's data. */
function headData(probs: number[][], labels: string[], what: string): HeatmapData {
  const name = (t: number) => (t === 0 ? '"BOS"' : namedText(labels[t]));
  return {
    rows: probs.length,
    cols: probs.length,
    value: (r, c) => probs[r][c] ?? 0,
    allowed: (r, c) => c <= r,
    rowLabel: (r) => (r === 0 ? 'BOS' : tokenLabel(labels[r])),
    colLabel: (c) => (c === 0 ? 'BOS' : tokenLabel(labels[c])),
    scale: sequential(0, 1),
    domain: [0, 1],
    describe: (r, c) =>
      c <= r
        ? `${what}: query ${r} (${name(r)}) → key ${c} (${name(c)}): p = ${formatNumber(probs[r][c])}`
        : `${what}: key ${c} comes after query ${r} (masked)`,
  };
}

/** Every head's score on one pattern: a small table, the strongest head marked. */
function scoreTable(p: PatternScores, testId: string): HTMLElement {
  const heads = p.heads[0].length;
  const header = el('tr', {}, el('th', { scope: 'col' }, 'layer'), ...Array.from({ length: heads }, (_, h) => el('th', { scope: 'col' }, `head ${h}`)));
  const rows = p.heads.map((scores, l) =>
    el(
      'tr',
      {},
      el('th', { scope: 'row' }, String(l)),
      ...scores.map((s, h) => {
        const strongest = l === p.strongest.layer && h === p.strongest.head;
        return el('td', { class: strongest ? 'strongest' : '', 'data-score': String(s) }, formatNumber(s, 3));
      }),
    ),
  );
  return el('div', { class: 'scroll-x', tabindex: 0, role: 'region', 'aria-label': 'every head\'s score' }, el('table', { class: 'score-table', 'data-testid': testId }, el('thead', {}, header), el('tbody', {}, ...rows)));
}

function pattern(patterns: { patterns: PatternScores[] }, name: PatternScores['name']): PatternScores {
  return patterns.patterns.find((p) => p.name === name)!;
}

function headPicker(checkpoint: Checkpoint, layer: number, head: number): HTMLSelectElement {
  const c = checkpoint.info.config;
  const options: [string, string][] = [];
  for (let l = 0; l < c.n_layers; l++) for (let h = 0; h < c.n_heads; h++) options.push([`${l}.${h}`, `layer ${l}, head ${h}`]);
  return select(options, `${layer}.${head}`);
}

const pick = (value: string) => value.split('.').map(Number) as [number, number];

/** previous-token-head: a previous-token head on the reader's text. */
export function mountPreviousTokenHead(root: HTMLElement, _context: WidgetContext): void {
  const status = el('p', { class: 'status', 'data-testid': 'previous-token-head-status' });
  root.replaceChildren(status);
  whenNear(root, status, (checkpoint) => {
    const input = el('textarea', { rows: 2, spellcheck: 'false', 'data-testid': 'previous-token-head-text' }) as HTMLTextAreaElement;
    input.value = defaultText;
    const record = pattern(checkpoint.record.head_patterns, 'previous_token').strongest;
    const picker = headPicker(checkpoint, record.layer, record.head);
    picker.dataset.testid = 'previous-token-head-head';
    const heatmap = new Heatmap({ title: 'Previous-token head', rowAxis: 'query (character)', colAxis: 'key (character)', maxCellPx: 22 });
    const finding = el('p', { class: 'finding', 'data-testid': 'previous-token-head-finding' });
    const table = el('div');
    const update = () => {
      try {
        const patterns = checkpoint.headPatterns(input.value, 1);
        const view = checkpoint.forward(input.value);
        const [layer, head] = pick(picker.value);
        const p = pattern(patterns, 'previous_token');
        heatmap.setTitle(`Layer ${layer}, head ${head}`);
        heatmap.setData(headData(view.layers[layer].probabilities[0][head], view.labels, `layer ${layer}, head ${head}`));
        table.replaceChildren(scoreTable(p, 'previous-token-head-scores'));
        const score = p.heads[layer][head];
        finding.textContent =
          `On this text, layer ${layer}, head ${head} gives the character just before each query ${formatNumber(score, 3)} of its ` +
          `attention on average (queries 1 onwards; spreading evenly would give ${formatNumber(p.uniform_baseline, 3)}). ` +
          (score >= patterns.threshold ? 'It is a previous-token head here.' : `Below ${patterns.threshold}: not a previous-token head on this text.`);
        input.removeAttribute('aria-invalid');
        setStatus(status, '');
      } catch (error) {
        input.setAttribute('aria-invalid', 'true');
        setStatus(status, `The model cannot read this text: ${error instanceof Error ? error.message : String(error)}`, 'error');
      }
    };
    input.addEventListener('input', update);
    picker.addEventListener('change', update);
    root.replaceChildren(
      el('div', { class: 'controls' }, wide(labelled('Text', input, `at most ${checkpoint.info.context - 1} characters`)), labelled('Head', picker)),
      status,
      finding,
      heatmap.root,
      el('p', { class: 'view-caption' }, 'Previous-token score of every head on this text (the highest marked):'),
      table,
    );
    update();
  });
}

// One string's induction score moves by about 0.05 from one random string to the next
// (0.36 to 0.54 over 32 strings for this model's best head), so the verdict and the
// table are the mean over this many strings, seeds 1 on: within about 0.02 of the mean
// over many more (0.44 here against 0.465 over 32).
const inductionStrings = 8;

/** induction-head: an induction head on random strings written twice. */
export function mountInductionHead(root: HTMLElement, _context: WidgetContext): void {
  const status = el('p', { class: 'status', 'data-testid': 'induction-head-status' });
  root.replaceChildren(status);
  whenNear(root, status, (checkpoint) => {
    let seed = 1;
    // The ordinary-text half of the patterns is not used here; any text will do.
    const averaged = checkpoint.headPatterns(defaultText, 1, inductionStrings);
    const mean = pattern(averaged, 'induction');
    const R = averaged.induction_length;
    const picker = headPicker(checkpoint, mean.strongest.layer, mean.strongest.head);
    picker.dataset.testid = 'induction-head-head';
    const again = el('button', { type: 'button', 'data-testid': 'induction-head-new' }, 'Another random string');
    const heatmap = new Heatmap({ title: 'Induction head', rowAxis: 'query (character)', colAxis: 'key (character)', maxCellPx: 14 });
    const shown = el('p', { class: 'view-caption wrap-anywhere', 'data-testid': 'induction-head-string' });
    const finding = el('p', { class: 'finding', 'data-testid': 'induction-head-finding' });
    const update = () => {
      const one = checkpoint.headPatterns(defaultText, seed, 1);
      const [layer, head] = pick(picker.value);
      const view = checkpoint.forward(one.induction_text);
      heatmap.setTitle(`Layer ${layer}, head ${head}`);
      heatmap.setData(headData(view.layers[layer].probabilities[0][head], view.labels, `layer ${layer}, head ${head}`));
      shown.textContent = `BOS, then ${R} random characters written twice (seed ${seed}): ${JSON.stringify(one.induction_text)}`;
      const score = mean.heads[layer][head], here = pattern(one, 'induction').heads[layer][head];
      finding.dataset.score = String(score);
      finding.textContent =
        `Averaged over ${inductionStrings} random strings of ${R} characters (seeds 1 to ${inductionStrings}), in the second copy ` +
        `layer ${layer}, head ${head} gives the character that followed the current one in the first copy ${formatNumber(score, 3)} of its ` +
        `attention (spreading evenly would give ${formatNumber(mean.uniform_baseline, 3)}). ` +
        (score >= averaged.threshold
          ? `That is ${averaged.threshold} or more, the mark every score on this page uses: an induction head. `
          : `Below ${averaged.threshold}, the mark every score on this page uses: not an induction head by that mark, though ` +
            `${Math.round(score / mean.uniform_baseline)} times an even spread. `) +
        `On the string shown: ${formatNumber(here, 3)}.`;
      setStatus(status, '');
    };
    again.addEventListener('click', () => {
      seed += 1;
      update();
    });
    picker.addEventListener('change', update);
    root.replaceChildren(el('div', { class: 'controls' }, labelled('Head', picker), again), status, shown, finding, heatmap.root,
      el('p', { class: 'view-caption' }, `Induction score of every head, the mean over the ${inductionStrings} strings (the highest marked):`),
      scoreTable(mean, 'induction-head-scores'));
    update();
  });
}

/** first-token-weight: does a sink form on the first token? */
export function mountFirstTokenWeight(root: HTMLElement, _context: WidgetContext): void {
  const status = el('p', { class: 'status', 'data-testid': 'first-token-weight-status' });
  root.replaceChildren(status);
  whenNear(root, status, (checkpoint) => {
    const input = el('textarea', { rows: 2, spellcheck: 'false', 'data-testid': 'first-token-weight-text' }) as HTMLTextAreaElement;
    input.value = defaultText;
    const ours = el('div');
    const finding = el('p', { class: 'finding', 'data-testid': 'first-token-weight-finding' });
    const theirs = el(
      'table',
      { class: 'score-table' },
      el('caption', {}, 'Qwen3-0.6B (28 layers, a 29-token prompt): mean weight on position 0, published figures (',
        el('a', { href: '#ref-qwen3-sinks' }, 'source'), '), not measured here'),
      el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'layer'), ...qwen3Sinks.map(([l]) => el('th', { scope: 'col' }, String(l))))),
      el('tbody', {}, el('tr', {}, el('th', { scope: 'row' }, 'weight'), ...qwen3Sinks.map(([, w]) => el('td', {}, formatNumber(w, 3))))),
    );
    const update = () => {
      try {
        const patterns = checkpoint.headPatterns(input.value, 1);
        const p = pattern(patterns, 'first_token');
        const means = p.heads.map((layer) => layer.reduce((a, b) => a + b, 0) / layer.length);
        ours.replaceChildren(scoreTable(p, 'first-token-weight-scores'));
        finding.dataset.strongest = String(p.strongest.score);
        finding.textContent =
          `Here the second half of the queries give the first position (BOS) ${means.map((m, l) => `${formatNumber(m, 3)} in layer ${l}`).join(' and ')} ` +
          `on average over the heads, and at most ${formatNumber(p.strongest.score, 3)} in any one head; spreading evenly would give ` +
          `${formatNumber(p.uniform_baseline, 3)}. ` +
          (p.strongest.score >= patterns.threshold
            ? `A head gives it ${patterns.threshold} or more, the mark every score on this page uses: a sink has formed.`
            : `No head gives it ${patterns.threshold}, the mark every score on this page uses: no sink has formed in this model.`);
        input.removeAttribute('aria-invalid');
        setStatus(status, '');
      } catch (error) {
        input.setAttribute('aria-invalid', 'true');
        setStatus(status, `The model cannot read this text: ${error instanceof Error ? error.message : String(error)}`, 'error');
      }
    };
    input.addEventListener('input', update);
    root.replaceChildren(el('div', { class: 'controls' }, wide(labelled('Text', input))), status, finding,
      el('p', { class: 'view-caption' }, 'First-token (sink) score of every head on this text:'), ours, el('div', { class: 'scroll-x', tabindex: 0, role: 'region', 'aria-label': 'Qwen3-0.6B\'s first-token scores' }, theirs));
    update();
  });
}

/** loss-and-continuation: the loss it reached and what it writes. */
export function mountLossAndContinuation(root: HTMLElement, _context: WidgetContext): void {
  const status = el('p', { class: 'status', 'data-testid': 'loss-and-continuation-status' });
  root.replaceChildren(status);
  whenNear(root, status, async (checkpoint) => {
    const { LossCurve, uniformLossText } = await import('../shared/loss-curve');
    const r = checkpoint.record;
    const characters = checkpoint.info.vocab_size - 1;  // BOS is never a target
    const chart = new LossCurve('loss-and-continuation-curve');
    chart.setData({ losses: [], heldout: r.curve.map((c) => [c.step, c.heldout_loss] as [number, number]), characters, steps: r.result.steps });
    const summary = el('p', { 'data-testid': 'loss-and-continuation-summary' },
      `attn train ran ${groupDigits(r.result.steps)} steps of ${r.settings.batch} windows of ${r.settings.context} characters ` +
      `(${r.settings.repeat_fraction * 100}% of them a random string repeated) in ${count(Math.round(r.result.training_seconds / 60), 'minute')} on ` +
      `${count(r.threads, 'CPU thread')}. On the held-out last tenth of the plays it ends at ` +
      `${formatNumber(r.result.heldout_loss, 3)} nats per character; guessing evenly among the ${characters} characters ` +
      `would cost ${uniformLossText(characters)}.`);
    const input = el('textarea', { rows: 2, spellcheck: 'false', 'data-testid': 'loss-and-continuation-text' }) as HTMLTextAreaElement;
    input.value = defaultText;
    const loss = el('p', { class: 'finding', 'data-testid': 'loss-and-continuation-loss' });
    const prompt = el('textarea', { rows: 2, spellcheck: 'false', 'data-testid': 'loss-and-continuation-prompt' }) as HTMLTextAreaElement;
    prompt.value = 'KING HENRY:\n';
    const go = el('button', { type: 'button', 'data-testid': 'loss-and-continuation-generate' }, 'Continue');
    const written = el('pre', { class: 'generated', 'data-testid': 'loss-and-continuation-written' });
    const score = () => {
      try {
        const result = checkpoint.loss(input.value);
        loss.dataset.loss = String(result.loss);
        loss.textContent = `On your text the model pays ${formatNumber(result.loss, 3)} nats per character (${count(result.characters, 'character')} after BOS).`;
        input.removeAttribute('aria-invalid');
      } catch (error) {
        input.setAttribute('aria-invalid', 'true');
        loss.textContent = `The model cannot score this text: ${error instanceof Error ? error.message : String(error)}`;
      }
    };
    const write = () => {
      try {
        const room = checkpoint.info.context - 1 - [...prompt.value].length;
        const result = checkpoint.generate(prompt.value, Math.max(1, Math.min(48, room)));
        written.textContent = prompt.value + result.text;
        setStatus(status, '');
      } catch (error) {
        setStatus(status, `Cannot continue this prompt: ${error instanceof Error ? error.message : String(error)}`, 'error');
      }
    };
    input.addEventListener('input', score);
    go.addEventListener('click', write);
    root.replaceChildren(summary, chart.root, el('div', { class: 'controls' }, wide(labelled('Text to score', input))), loss,
      el('div', { class: 'controls' }, wide(labelled('Prompt', prompt, 'the model continues it greedily: the most likely character each time')), go),
      status, written);
    score();
    write();
  });
}
