// The notebook's sink scores: for each model the page ships for this section, one pass
// over BOS and the reader's text through the core (the stream module's headScores), each
// head's first-token score (the mean weight the second half of the queries give position
// 0, lessons/head_patterns.hpp), beside Qwen3-0.6B's published figures; for the model
// with learned sink logits, also each head's share given to its sink.
//
// URL state: sink-scores.text.
import { el, formatNumber, labelled, setStatus } from '../../lib/dom';
import { markInvalid } from '../../lib/fields';
import { checkpointFiles, StreamSession } from '../../lib/stream-core';
import type { UrlState } from '../../lib/url-state';
import { qwen3Sinks, sinkModels, type ShippedModel } from '../shared/sink-models';

// Held-out lines (the corpus's last tenth), within the 63 characters after BOS the models were trained on.
const defaultText = 'That talk\'d of her, have talk\'d amiss of her:\nIf she be curst,';
/** The mark every score on the page uses: a head that gives one key this much, on average, shows the pattern. */
const threshold = 0.5;

async function open(model: ShippedModel): Promise<StreamSession> {
  return StreamSession.open(await checkpointFiles(model.dir));
}

function table(heads: number[][], testId: string, caption: string): HTMLElement {
  let best = [0, 0];
  heads.forEach((row, l) => row.forEach((v, h) => { if (v > heads[best[0]][best[1]]) best = [l, h]; }));
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
  const panels = el('div', { class: 'sink-scores-models' });
  const theirs = table([qwen3Sinks.map(([, w]) => w)], 'sink-scores-qwen3', 'Qwen3-0.6B, published: mean weight on position 0 by layer (a 29-token prompt)');
  // Qwen3's columns are layers, not heads: relabel them.
  theirs.querySelectorAll('thead th').forEach((th, i) => { th.textContent = i === 0 ? '' : `layer ${qwen3Sinks[i - 1][0]}`; });
  theirs.querySelector('tbody th')!.textContent = 'weight';

  const update = () => {
    const text = input.value;
    try {
      const shown = sessions.map(([model, session]) => {
        return { model, scores: session.headScores(text) };
      });
      panels.replaceChildren(...shown.map(({ model, scores }) => {
        const strongest = Math.max(...scores.first_token.heads.flat());
        const parts: HTMLElement[] = [
          el('h4', { class: 'view-subtitle' }, model.label),
          el('p', { class: 'finding', 'data-model': model.id, 'data-strongest': String(strongest) },
            `Strongest head: ${formatNumber(strongest, 3)} on position 0 (spreading evenly: ${formatNumber(scores.first_token.uniform_baseline, 3)}); ` +
            (strongest >= threshold ? `at ${threshold} or more, a sink.` : `under ${threshold}: no sink.`)),
          table(scores.first_token.heads, `sink-scores-${model.id}`, `First-token score of every head, ${scores.tokens} tokens`),
        ];
        if (scores.learned_sink) {
          const share = Math.max(...scores.learned_sink.heads.flat());
          parts.push(el('p', { class: 'finding', 'data-model': model.id, 'data-learned': String(share) },
            `Its learned sink logits take up to ${formatNumber(share, 3)} of a head's weight: what a plain softmax would have to put on some key.`),
          table(scores.learned_sink.heads, `sink-scores-${model.id}-learned`, 'Share given to the learned sink, every head'));
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
  root.replaceChildren(el('div', { class: 'controls' }, labelled('Text', input, 'BOS is added in front; at most 63 characters')), status, panels, theirs);
  update();
}
