// trained-model's head summary: every head of a trained model ranked by the patterns the core
// measures (lessons/head_patterns.hpp), and what those numbers show, in words that
// say no more than the numbers: a head "does" a pattern only when its score reaches
// the core's threshold, and each sentence gives the strongest score beside the
// score of a head that spreads its attention evenly.
import type { ModelConfig } from '../../lib/core';
import { el, formatNumber, labelled, select } from '../../lib/dom';
import type { HeadPatterns, PatternScores } from '../../lib/trained-core';

const patternNames: Record<PatternScores['name'], { column: string; what: string; one: string; many: string }> = {
  previous_token: { column: 'previous token', what: 'the previous token', one: 'previous-token head', many: 'previous-token heads' },
  first_token: { column: 'first token (sink)', what: 'the first token (BOS)', one: 'attention sink', many: 'attention sinks' },
  self: { column: 'itself', what: "the query's own position", one: 'head that reads itself', many: 'heads that read themselves' },
  induction: {
    column: 'induction',
    what: 'the token that followed the current one at its earlier occurrence',
    one: 'induction head',
    many: 'induction heads',
  },
};

/** One sentence per pattern, from the scores alone. */
export function findings(patterns: HeadPatterns, heads: number): string[] {
  const share = `at least ${formatNumber(patterns.threshold, 2)} of`;
  return patterns.patterns.map((p) => {
    const names = patternNames[p.name];
    const best =
      `the highest is layer ${p.strongest.layer}, head ${p.strongest.head} at ${formatNumber(p.strongest.score, 3)}; ` +
      `spreading evenly would give ${formatNumber(p.uniform_baseline, 3)}`;
    const where =
      p.name === 'induction' ? ` on BOS and ${patterns.induction_length} random tokens written twice (mean over the second copy)` : ' on your text';
    if (p.showing.length === 0) return `No ${names.one}: no head gives ${names.what} ${share} its attention${where} (${best}).`;
    const count = p.showing.length === heads ? `All ${heads} heads` : p.showing.length === 1 ? `1 of ${heads} heads` : `${p.showing.length} of ${heads} heads`;
    const verb = p.showing.length === 1 ? 'gives' : 'give';
    return `${count} ${verb} ${names.what} ${share} ${p.showing.length === 1 ? 'its' : 'their'} attention${where}: ${p.showing.length === 1 ? `an ${names.one}`.replace(/^an ([^aeiou])/, 'a $1') : names.many} (${best}).`;
  });
}

/** Rows of the ranking shown until the reader asks for every head. */
const topRows = 8;

export class HeadSummary {
  readonly root: HTMLElement;
  private readonly words = el('ul', { class: 'findings', 'data-testid': 'trained-model-findings' });
  private readonly rank = select(
    Object.entries(patternNames).map(([name, n]) => [name, n.column] as [string, string]),
    'previous_token',
  );
  private readonly table = el('div', { class: 'scroll-x', tabindex: 0, role: 'region', 'aria-label': 'every head ranked', 'data-testid': 'trained-model-patterns' });
  private readonly more = el('button', { type: 'button', class: 'small', 'aria-expanded': 'false', 'data-testid': 'trained-model-all-heads' });
  private showAll = false;
  private patterns: HeadPatterns | null = null;

  constructor(private readonly config: ModelConfig, private readonly onSelect: (layer: number, head: number) => void) {
    this.rank.dataset.testid = 'trained-model-rank';
    this.rank.addEventListener('change', () => this.render());
    this.more.addEventListener('click', () => {
      this.showAll = !this.showAll;
      this.render();
    });
    this.root = el(
      'section',
      { class: 'head-summary' },
      el('h3', { class: 'view-subtitle' }, 'What each head does, measured'),
      el(
        'p',
        { class: 'view-caption' },
        'Each score is the mean weight a head gives one particular key: the previous token (queries 1 onwards), the first token ' +
          '(the second half of the queries), the query itself, and for induction, on a random sequence written twice, the key just after ' +
          "the current token's earlier occurrence. The core computes them from the model's own passes.",
      ),
      this.words,
      el('div', { class: 'controls' }, labelled('Rank heads by', this.rank)),
      this.table,
      this.more,
    );
  }

  show(patterns: HeadPatterns): void {
    this.patterns = patterns;
    this.render();
  }

  /** No scores to show, and why. */
  clear(reason: string): void {
    this.patterns = null;
    this.words.replaceChildren(el('li', {}, reason));
    this.table.replaceChildren();
    this.more.hidden = true;
  }

  private render(): void {
    const patterns = this.patterns;
    if (!patterns) return;
    const heads = this.config.n_layers * this.config.n_heads;
    this.words.replaceChildren(...findings(patterns, heads).map((text) => el('li', {}, text)));
    const by = patterns.patterns.find((p) => p.name === this.rank.value)!;
    const order: [number, number][] = [];
    for (let l = 0; l < this.config.n_layers; l++) for (let h = 0; h < this.config.n_heads; h++) order.push([l, h]);
    order.sort((a, b) => by.heads[b[0]][b[1]] - by.heads[a[0]][a[1]] || a[0] - b[0] || a[1] - b[1]);
    const group = this.config.n_heads / this.config.n_kv_heads;
    const header = el(
      'tr',
      {},
      el('th', { scope: 'col' }, 'rank'),
      el('th', { scope: 'col' }, 'layer, head (KV head)'),
      ...patterns.patterns.map((p) => el('th', { scope: 'col' }, patternNames[p.name].column)),
    );
    const shown = this.showAll ? order : order.slice(0, topRows);
    this.more.hidden = false;
    this.more.textContent = this.showAll ? `Show the top ${topRows} only` : `Show all ${order.length} heads`;
    this.more.setAttribute('aria-expanded', String(this.showAll));
    const body = shown.map(([l, h], i) => {
      const show = el('button', { type: 'button', class: 'small' }, `layer ${l}, head ${h} (${Math.floor(h / group)})`);
      show.addEventListener('click', () => this.onSelect(l, h));
      return el(
        'tr',
        { 'data-layer': l, 'data-head': h },
        el('td', {}, String(i + 1)),
        el('th', { scope: 'row' }, show),
        ...patterns.patterns.map((p) => {
          const score = p.heads[l][h];
          return el('td', score >= patterns.threshold ? { class: 'strong' } : {}, formatNumber(score, 3));
        }),
      );
    });
    this.table.replaceChildren(
      el(
        'table',
        { class: 'pattern-table' },
        el('caption', {}, `Every head ranked by its ${patternNames[by.name].column} score; scores of ${formatNumber(patterns.threshold, 2)} or more are marked`),
        el('thead', {}, header),
        el('tbody', {}, ...body),
      ),
    );
  }
}
