// The judge's report (core/judge/judge.hpp, judge_outputs) as the page shows it:
// a verdict, the named diagnosis when there is one, then every test with what
// went wrong in it: a shape mismatch, the positions of NaN or Infinity, the
// largest errors, the first mismatching entry, the error thrown.
import { el } from '../lib/dom';
import type { CaseReport, JudgeNumber, JudgeReport } from '../lib/core-types';
import { decodeNumber } from './codec.mjs';

export interface ReportContext {
  /** Mistake id -> title, from the judge's catalogue. */
  mistakeTitles: Map<string, string>;
  /** Moves the editor to a line the error names. */
  showLine(line: number, column: number): void;
  runMs: number;
  judgeMs: number;
  /** Only the verdict line: the caller shows the one problem (a syntax error) itself. */
  summaryOnly?: boolean;
}

/** A number for reading: up to 7 significant digits, exponent notation when tiny or huge. */
export function formatValue(value: JudgeNumber): string {
  const x = decodeNumber(value);
  if (!Number.isFinite(x)) return String(x);
  if (x === 0) return '0';
  const a = Math.abs(x);
  if (a < 1e-4 || a >= 1e7) return x.toExponential(3);
  return String(Number(x.toPrecision(7)));
}

export function formatError(x: number | undefined): string {
  if (x === undefined) return '–';
  if (x === 0) return '0';
  if (x >= 1e-3 && x < 1e4) return String(Number(x.toPrecision(2)));
  return x.toExponential(1);
}

/** "atol + rtol·|expected|" with the judge's numbers. */
export function toleranceText(tolerance: { atol: number; rtol: number }): string {
  return `|got − expected| ≤ ${tolerance.atol.toExponential()} + ${tolerance.rtol.toExponential()} · |expected|`;
}

const LINE = /\(line (\d+)(?:, column (\d+))?\)/;

function errorBlock(text: string, context: ReportContext): HTMLElement {
  const dd = el('dd', {}, el('code', { class: 'error-text' }, text));
  const match = LINE.exec(text);
  if (match) {
    const line = Number(match[1]), column = Number(match[2] ?? 1);
    const button = el('button', { type: 'button', class: 'small secondary' }, `Show line ${line}`);
    button.addEventListener('click', () => context.showLine(line, column));
    dd.append(' ', button);
  }
  return dd;
}

function row(list: HTMLDListElement, term: string, ...description: (Node | string)[]): void {
  list.append(el('dt', {}, term), el('dd', {}, ...description));
}

function caseDetails(c: CaseReport, context: ReportContext): HTMLDListElement {
  const list = el('dl', { class: 'case-details' });
  const d = c.details ?? {};
  if (d.field) row(list, 'In field', el('code', {}, d.field));
  switch (c.problem) {
    case 'error':
      list.append(el('dt', {}, c.error?.startsWith('timed out') || c.error?.startsWith('not run') ? 'Stopped' : 'Error'),
        errorBlock(c.error ?? 'no result', context));
      break;
    case 'shape':
      row(list, 'Shape', 'expected ', el('code', {}, `[${d.expected_shape?.join(', ')}]`), ', got ',
        el('code', {}, `[${d.got_shape?.join(', ')}]`));
      break;
    case 'type':
    case 'missing':
      row(list, c.problem === 'type' ? 'Wrong type' : 'Missing field', d.message ?? '');
      break;
    default: {
      if (d.nonfinite?.length) {
        const shown = d.nonfinite.map((n) => `${formatValue(n.value)} at ${n.index}`).join(', ');
        const count = d.nonfinite_count ?? d.nonfinite.length;
        row(list, 'NaN or Infinity', shown + (count > d.nonfinite.length ? `, … (${count} entries in all)` : ''));
      }
      row(list, 'Largest error', `${formatError(d.max_abs_error)} absolute, ${formatError(d.max_rel_error)} relative`,
        d.nonfinite?.length ? ' (finite entries only)' : '');
      if (d.first_mismatch) {
        const m = d.first_mismatch;
        row(list, 'First mismatch', 'at ', el('code', {}, m.index), ': expected ', el('code', {}, formatValue(m.expected)),
          ', got ', el('code', {}, formatValue(m.got)));
      }
    }
  }
  if (c.matches.length) {
    row(list, 'Looks like', c.matches.map((id) => context.mistakeTitles.get(id) ?? id).join('; '));
  }
  return list;
}

function passedError(c: CaseReport): number | undefined {
  const d = c.details;
  if (!d) return undefined;
  if (d.fields) return Math.max(...Object.values(d.fields).map((f) => f.max_abs_error ?? 0));
  return d.max_abs_error;
}

/** The whole report as a section; the caller puts it in a live region. */
export function renderReport(report: JudgeReport, context: ReportContext): HTMLElement {
  const section = el('div', { class: 'report', 'data-passed': String(report.passed) });
  const verdict = report.passed
    ? `All ${report.total} tests passed.`
    : `${report.passed_count} of ${report.total} tests passed.`;
  section.append(
    el('p', { class: `verdict ${report.passed ? 'pass' : 'fail'}`, 'data-testid': 'verdict' },
      el('span', { 'aria-hidden': 'true' }, report.passed ? '✓ ' : '✗ '), verdict),
    el('p', { class: 'timing' }, `Ran in ${Math.round(context.runMs)} ms, judged in ${Math.round(context.judgeMs)} ms.`),
  );
  if (context.summaryOnly) return section;
  if (report.diagnosis) {
    section.append(el('div', { class: 'diagnosis', 'data-testid': 'diagnosis', 'data-mistake': report.diagnosis.id },
      el('p', { class: 'diagnosis-title' }, 'Diagnosis: ', el('strong', {}, report.diagnosis.title)),
      ...(report.diagnosis.summary ? [el('p', { class: 'diagnosis-summary', 'data-testid': 'diagnosis-summary' }, report.diagnosis.summary)] : []),
      el('p', {}, report.diagnosis.explanation)));
  } else if (!report.passed && report.cases.every((c) => c.problem !== 'error')) {
    section.append(el('p', { class: 'no-diagnosis' },
      'The outputs match none of the mistakes the judge knows for this exercise; the details below show where they differ.'));
  }
  // One error for every test (a syntax error, a missing function): say it once.
  const errors = new Set(report.cases.map((c) => (c.problem === 'error' ? c.error : null)));
  if (errors.size === 1 && !errors.has(null) && !errors.has(undefined) && report.cases.length > 1) {
    const list = el('dl', { class: 'case-details single' }, el('dt', {}, 'Every test'), errorBlock(report.cases[0].error!, context));
    section.append(list, toleranceNote(report));
    return section;
  }
  const list = el('ol', { class: 'cases' });
  for (const c of report.cases) {
    const item = el('li', { class: `case ${c.passed ? 'case-pass' : 'case-fail'}` },
      el('span', { class: 'case-mark', 'aria-hidden': 'true' }, c.passed ? '✓' : '✗'),
      el('span', { class: 'case-name' }, el('span', { class: 'visually-hidden' }, c.passed ? 'Passed: ' : 'Failed: '), c.name));
    if (c.passed) {
      const error = passedError(c);
      if (error !== undefined) item.append(el('span', { class: 'case-meta' }, `largest error ${formatError(error)}`));
    } else {
      item.append(caseDetails(c, context));
    }
    list.append(item);
  }
  section.append(list, toleranceNote(report));
  return section;
}

function toleranceNote(report: JudgeReport): HTMLElement {
  return el('p', { class: 'tolerance' }, 'Each entry must satisfy ', el('code', {}, toleranceText(report.tolerance)), '. ',
    el('a', { href: '#tolerance' }, 'Why this tolerance?'));
}
