// The notebook's sink scores: for each model the page ships for this section, one pass
// over BOS and the reader's text through the core (the stream module's headScores), each
// head's first-token score (the mean weight the second half of the queries give position
// 0, lessons/head_patterns.hpp), drawn as bars by layer and head with the 0.3 and 0.5
// marks, beside Qwen3-0.6B's published figures; for the model with learned sink logits,
// also each head's share given to its sink. The numbers are in tables under the bars.
// Each model's strongest head is also scored on the sink experiment's text, to show how
// much the score moves with the text.
//
// URL state: sink-scores.text.
import { el, formatNumber, labelled, setStatus } from '../../lib/dom';
import { markInvalid } from '../../lib/fields';
import { checkpointFiles, StreamSession } from '../../lib/stream-core';
import type { UrlState } from '../../lib/url-state';
import { qwen3Sinks, qwen3SinksSource, sinkModels, type ShippedModel } from '../shared/sink-models';
import { scoreBars, type BarMark } from './score-bars';

// Held-out lines (the corpus's last tenth), within the 63 characters after BOS the models were trained on.
const defaultText = 'That talk\'d of her, have talk\'d amiss of her:\nIf she be curst,';
/**
 * The text docs/sinks.md's experiment scores every head on: the first 63 characters of the
 * held-out tenth, as attn train's record (training.json's head_patterns) scores them.
 */
const experimentText = '\n\nGREMIO:\nGood morrow, neighbour Baptista.\n\nBAPTISTA:\nGood morr';
/** The mark every score on the page uses: a head that gives one key this much, on average, shows the pattern. */
const threshold = 0.5;
/** The experiment's lower mark: one of its runs passed it. */
const passedMark = 0.3;
const marks: BarMark[] = [{ at: passedMark, label: `${passedMark}` }, { at: threshold, label: `${threshold}: a sink` }];

/** Every head's score as bars, one group per layer. */
function bars(heads: number[][], testId: string, label: string): HTMLElement {
  return scoreBars(heads.map((row, l) => ({ label: `layer ${l}`, bars: row.map((value, h) => ({ label: `h${h}`, value })) })), marks, label, testId);
}

async function open(model: ShippedModel): Promise<StreamSession> {
  return StreamSession.open(await checkpointFiles(model.dir));
}

function table(heads: number[][], testId: string, caption: string): HTMLElement {
  const best = strongestHead(heads);
  return el('div', { class: 'scroll-x', tabindex: 0, role: 'region', 'aria-label': caption },
    el('table', { class: 'score-table', 'data-testid': testId },
      el('caption', {}, caption),
      el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'layer'), ...heads[0].map((_, h) => el('th', { scope: 'col' }, `head ${h}`)))),
      el('tbody', {}, ...heads.map((row, l) => el('tr', {}, el('th', { scope: 'row' }, String(l)),
        ...row.map((v, h) => el('td', {
          class: [l === best[0] && h === best[1] ? 'strongest' : '', v >= threshold ? 'strong' : ''].join(' ').trim(),
          'data-score': String(v),
        }, formatNumber(v, 3))))))));
}

export function mountSinkScores(root: HTMLElement, { state }: { state: UrlState }): void {
  // Built at once; the three models load after, so the widgets below are not kept waiting.
  const status = el('p', { class: 'status', 'data-testid': 'sink-scores-status' });
  root.replaceChildren(status);
  setStatus(status, 'Loading the models…');
  void Promise.all(sinkModels.map(async (model): Promise<[ShippedModel, StreamSession]> => {
    try {
      return [model, await open(model)];
    } catch (error) {
      throw new Error(`Could not open ${model.label}: ${(error as Error).message}.`);
    }
  })).then((sessions) => show(root, status, state, sessions), (error: Error) => setStatus(status, error.message, 'error'));
}

function show(root: HTMLElement, status: HTMLElement, state: UrlState, sessions: [ShippedModel, StreamSession][]): void {
  const input = el('textarea', { rows: 2, spellcheck: 'false', 'data-testid': 'sink-scores-text' }) as HTMLTextAreaElement;
  input.value = state.get('text') ?? defaultText;
  const useExperiment = el('button', { type: 'button', 'data-testid': 'sink-scores-experiment-text' }, 'The experiment\'s text');
  const useDefault = el('button', { type: 'button', 'data-testid': 'sink-scores-default-text' }, 'The figure\'s text');
  const panels = el('div', { class: 'sink-scores-models' });
  const qwen3Caption = 'Qwen3-0.6B, published: mean weight on position 0 by layer (a 29-token prompt)';
  const theirsTable = table([qwen3Sinks.map(([, w]) => w)], 'sink-scores-qwen3', qwen3Caption);
  // Qwen3's columns are layers, not heads: relabel them.
  theirsTable.querySelectorAll('thead th').forEach((th, i) => { th.textContent = i === 0 ? '' : `layer ${qwen3Sinks[i - 1][0]}`; });
  theirsTable.querySelector('tbody th')!.textContent = 'weight';
  const theirs = el('div', { class: 'sink-scores-published' },
    el('h4', { class: 'view-subtitle' }, 'Qwen3-0.6B (published figures, not measured here)'),
    scoreBars([{ label: 'Qwen3-0.6B, by layer', bars: qwen3Sinks.map(([layer, value]) => ({ label: `L${layer}`, value })) }], marks,
      `${qwen3Caption}: ${qwen3Sinks.map(([layer, w]) => `layer ${layer} ${w}`).join(', ')}.`, 'sink-scores-qwen3-bars'),
    el('p', { class: 'view-caption' }, 'Source: ', el('a', { href: '#ref-qwen3-sinks' }, qwen3SinksSource), '.'),
    numbers(theirsTable));

  // The experiment's text does not change: scored once per model.
  const onExperimentText = sessions.map(([, session]) => session.headScores(experimentText).first_token.heads);
  const update = () => {
    const text = input.value;
    try {
      const shown = sessions.map(([model, session], m) => ({ model, scores: session.headScores(text), experiment: onExperimentText[m] }));
      panels.replaceChildren(...shown.map(({ model, scores, experiment }) => {
        const heads = scores.first_token.heads;
        const strongest = Math.max(...heads.flat());
        const [layer, head] = strongestHead(heads);
        const onExperiment = experiment[layer][head];
        const parts: HTMLElement[] = [
          el('h4', { class: 'view-subtitle' }, model.label),
          el('p', { class: 'finding', 'data-model': model.id, 'data-strongest': String(strongest) },
            `Strongest head: layer ${layer}, head ${head}, ${formatNumber(strongest, 3)} on position 0 (spreading evenly: ${formatNumber(scores.first_token.uniform_baseline, 3)}); ` +
            (strongest >= threshold ? `at ${threshold} or more, a sink.` : `under ${threshold}: no sink.`)),
          bars(heads, `sink-scores-${model.id}-bars`, `First-token score of every head of ${model.label}, by layer: ` +
            heads.map((row, l) => `layer ${l}: ${row.map((v) => formatNumber(v, 3)).join(', ')}`).join('; ') + '.'),
          el('p', { class: 'finding', 'data-model': model.id, 'data-experiment': String(onExperiment) },
            text === experimentText
              ? 'This is the text the sink experiment scores its heads on.'
              : `On the sink experiment's text, the same head gives ${formatNumber(onExperiment, 3)}: the score depends on the text.`),
          numbers(table(heads, `sink-scores-${model.id}`, `First-token score of every head, ${scores.tokens} tokens`)),
        ];
        if (scores.learned_sink) {
          const learned = scores.learned_sink.heads;
          const share = Math.max(...learned.flat());
          parts.push(el('p', { class: 'finding', 'data-model': model.id, 'data-learned': String(share) },
            `Its learned sink logits take up to ${formatNumber(share, 3)} of a head's weight: what a plain softmax would have to put on some key.`),
          bars(learned, `sink-scores-${model.id}-learned-bars`, 'Share every head gives its learned sink, by layer: ' +
            learned.map((row, l) => `layer ${l}: ${row.map((v) => formatNumber(v, 3)).join(', ')}`).join('; ') + '.'),
          numbers(table(learned, `sink-scores-${model.id}-learned`, 'Share given to the learned sink, every head')));
        }
        return el('div', { class: 'sink-scores-model', 'data-model': model.id }, ...parts);
      }));
      markInvalid([input], false);
      setStatus(status, '');
      state.set({ text: text === defaultText ? null : text });
    } catch (error) {
      markInvalid([input], true);
      setStatus(status, `The models cannot read this text: ${(error as Error).message}.`, 'error');
    }
  };
  input.addEventListener('input', update);
  const useText = (text: string) => {
    input.value = text;
    update();
  };
  useExperiment.addEventListener('click', () => useText(experimentText));
  useDefault.addEventListener('click', () => useText(defaultText));
  root.replaceChildren(
    el('div', { class: 'controls' }, labelled('Text', input, 'BOS is added in front; at most 63 characters'), useDefault, useExperiment),
    status, panels, theirs);
  update();
}

/** The layer and head of the largest score. */
function strongestHead(heads: number[][]): [number, number] {
  let best: [number, number] = [0, 0];
  heads.forEach((row, l) => row.forEach((v, h) => { if (v > heads[best[0]][best[1]]) best = [l, h]; }));
  return best;
}

/** A table of the numbers the bars draw, folded under them. */
function numbers(tableRegion: HTMLElement): HTMLElement {
  return el('details', { class: 'sink-scores-numbers' }, el('summary', {}, 'The numbers'), tableRegion);
}
