// A check record as a row of the table attn verify prints (kernel or model, case,
// check, max |error|, tolerance, PASS or FAIL): the GPU page's tables and the notebook's.
import type { CheckRecord } from '../lib/core-types';
import { el } from '../lib/dom';

/** An error or tolerance as the table prints it: 1.234e-7, inf for none. */
export function recordNumber(x: number | null): string {
  return x === null ? 'inf' : Number.isFinite(x) ? x.toExponential(3) : String(x);
}

const recordColumns = ['check', 'max |error|', 'tolerance', 'result'];

/** A table of records under `first`'s column names and recordRow's: its rows go in `body`. */
export function checkTable(first: string[], body: HTMLTableSectionElement, testid: string): HTMLTableElement {
  return el('table', { class: 'check-table', 'data-testid': testid },
    el('thead', {}, el('tr', {}, ...[...first, ...recordColumns].map((h) => el('th', { scope: 'col' }, h)))), body);
}

/** A record's row of the CLI's table after the `first` cells: check, max |error|, tolerance, PASS or FAIL; failing rows in red. */
export function recordRow(record: CheckRecord, first: string[]): HTMLTableRowElement {
  const cells = [...first, record.name, recordNumber(record.max_abs_error), `${record.relation} ${recordNumber(record.tolerance)}`,
    record.passed ? 'PASS' : 'FAIL'];
  return el('tr', { class: record.passed ? 'pass' : 'fail', title: record.compares },
    ...cells.map((text, i) => el('td', { class: i === first.length + 1 || i === first.length + 2 ? 'num' : undefined }, text)));
}
