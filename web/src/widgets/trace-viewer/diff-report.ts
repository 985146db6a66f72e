// attn diff's report in the page, in the words `attn diff` prints
// (native/commands/diff.cpp): the verdict, the first divergence with its layer and
// index, the mistake it matches (or why none was named), every tensor compared with
// its errors and tolerance, and the tensors not given.
import type { ComparedTensor, DiffReport, Divergence } from '../../lib/trace-viewer-core';
import { el } from '../../lib/dom';
import { count } from '../../lib/words';
import { formatError } from './trace-summary';

/** As the CLI prints values (printf's %.3g): 3 significant digits; "nan", "inf" or "-inf" as the report names them. */
function threeDigits(x: number | string): string {
  return typeof x === 'string' ? x : String(Number(x.toPrecision(3)));
}


/** "layers.0.q_rope, layer 0, sequence 0, head 0, position 1, channel 0: ours -0.196, theirs 0.738" */
export function divergenceText(d: Divergence): string {
  const where = d.axes.map((axis) => `, ${axis} ${String(d[axis])}`).join('');
  return `${d.tensor}${d.layer !== undefined ? `, layer ${d.layer}` : ''}${where}: ours ${threeDigits(d.ours)}, theirs ${threeDigits(d.theirs)}`;
}

/** What the CLI says after the divergence: the mistake named, or why none was. */
function diagnosisText(report: DiffReport): string {
  if (report.diagnosis)
    return `${report.diagnosis.description}. On the same inputs, the core computing that mistake gives your values.`;
  if (report.mistakes_tried.length)
    return `No known mistake gives these values (tried ${report.mistakes_tried.join(', ')}). ` +
      'Everything before this tensor agreed, so the operation computing it is where to look.';
  if (report.compared.length > 1)
    return 'The tensors you gave before it agree; give the ones just before it (docs/diff.md lists them in order) to narrow the search.';
  return 'It is the first tensor you gave; give the ones before it (docs/diff.md lists them in order) to find where the difference starts.';
}

function comparedTable(compared: ComparedTensor[], first: string | null): HTMLElement {
  const body = el('tbody');
  for (const c of compared) {
    body.append(
      el(
        'tr',
        { class: c.name === first ? 'first' : undefined, 'data-name': c.name },
        el('td', {}, el('code', {}, c.name)),
        el('td', { class: c.agrees ? 'pass' : 'fail' }, c.agrees ? 'agrees' : `DIVERGES (${count(c.mismatches, 'value', 'values')})`),
        el('td', {}, c.precision),
        el('td', { class: 'number' }, `[${c.shape.join(', ')}]`),
        el('td', { class: 'number' }, formatError(c.max_abs_error)),
        el('td', { class: 'number' }, formatError(c.max_rel_error)),
        el('td', { class: 'number' }, `${formatError(c.tolerance.atol)}, ${formatError(c.tolerance.rtol)}`),
      ),
    );
  }
  return el(
    'div',
    { class: 'scroll-x', tabindex: 0, role: 'region', 'aria-label': 'every tensor compared' },
    el(
      'table',
      { class: 'data checks', 'data-testid': 'trace-viewer-diff-table' },
      el('caption', { class: 'view-caption' }, 'Each tensor you gave, in the order the forward computes it: yours must be within atol + rtol·|ours| of the core\'s float64 value.'),
      // The verdict comes second so that it stays in view when a phone scrolls the table.
      el('thead', {}, el('tr', {}, ...['tensor', 'verdict', 'dtype', 'shape', 'max |error|', 'max relative', 'atol, rtol'].map((h) => el('th', { scope: 'col' }, h)))),
      body,
    ),
  );
}

/** The report's verdict as the CLI's lines, for a file called `source` checked on weights seeded with `seed`. */
export function verdictLines(report: DiffReport, source: string, seed: number): HTMLElement[] {
  const B = report.tokens.length, T = report.tokens[0].length;
  const d = report.first_divergence;
  const lines: HTMLElement[] = [
    el('p', { class: 'view-caption' }, `${source} against the page's checkpoint (seed ${seed}), ${count(B, 'sequence', 'sequences')} of ${count(T, 'token', 'tokens')}, ${count(report.compared.length, 'tensor', 'tensors')} given.`),
    el(
      'p',
      { class: `verdict ${report.agrees ? 'pass' : 'fail'}`, 'data-testid': 'trace-viewer-diff-verdict' },
      report.agrees ? 'Every tensor you gave agrees with the core.' : `Your tensors leave the core's at ${d?.tensor ?? 'a tensor'}.`,
    ),
  ];
  if (d) {
    lines.push(el('p', { 'data-testid': 'trace-viewer-diff-divergence', 'data-tensor': d.tensor, 'data-index': JSON.stringify(d.index) },
      el('strong', {}, 'First divergence: '), `${divergenceText(d)} (${count(d.mismatches, 'value', 'values')} outside the tolerance).`));
    lines.push(el('p', { 'data-testid': 'trace-viewer-diff-diagnosis', 'data-mistake': report.diagnosis?.mistake ?? '' },
      el('strong', {}, report.diagnosis ? `Diagnosis: ${report.diagnosis.mistake}: ` : 'Diagnosis: none. '), diagnosisText(report)));
  }
  return lines;
}

/** Every tensor compared, then those not given. */
export function comparedParts(report: DiffReport): HTMLElement[] {
  return [
    comparedTable(report.compared, report.first_divergence?.tensor ?? null),
    el('p', { class: 'view-caption', 'data-testid': 'trace-viewer-diff-not-given' },
      report.not_given.length ? `Not given, so not checked: ${report.not_given.join(', ')}.` : 'You gave every tensor there is to check.'),
  ];
}
