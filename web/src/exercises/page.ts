// The exercises page: the list with each exercise's state, the selected exercise
// (statement, signature, editor, hints, results, reference solution), and the
// progress tools (export, import, time limit).
//
// Flow of a run: the code goes to a sandbox worker with the judge's cases
// (sandbox.ts); the outputs come back, and the wasm judge (judgeOutputs) turns
// them into the report that report.ts draws. Learner code never runs here.
// The selected exercise lives in the URL (?e=rope), so a link opens it.
import type { CatalogueEntry, JudgeReport } from '../lib/core-types';
import { Judge, loadJudge } from '../lib/judge-core';
import { cited, sourceArchiveLink } from '../lib/cited';
import { el, setStatus } from '../lib/dom';
import { exerciseTexts, type ExerciseText } from 'virtual:exercises';
import { createEditor, CodeEditor } from './editor';
import { ImportError, LastRun, ProgressStore, Status, statusOf, TIMEOUT_CHOICES } from './progress';
import { renderReport } from './report';
import { runInSandbox, seconds, warmSandbox } from './sandbox';

const statusLabel: Record<Status, string> = { 'not-tried': 'not tried', failing: 'failing', passed: 'passed', 'passed-once': 'passed once' };

/** When an exercise first passed, as a date the learner reads ("5 Dec 2026"), or '' when unknown. */
function solvedDate(solvedAt: string | undefined): string {
  const when = solvedAt ? new Date(solvedAt) : null;
  return when && !Number.isNaN(when.getTime()) ? when.toLocaleDateString(undefined, { day: 'numeric', month: 'short', year: 'numeric' }) : '';
}

/** A badge's longer text, for its title: what passed once means, with the date. */
function statusTitle(status: Status, solvedAt: string | undefined): string | undefined {
  if (status !== 'passed-once') return undefined;
  const date = solvedDate(solvedAt);
  return `Every test passed ${date ? `on ${date}` : 'in an earlier run'}; the latest run did not pass.`;
}

function byId<T extends HTMLElement>(id: string): T {
  const node = document.getElementById(id);
  if (!node) throw new Error(`the page has no #${id}`);
  return node as T;
}

function html(markup: string, className?: string): HTMLElement {
  const node = el('div', { class: className });
  node.innerHTML = markup; // our own catalogue text, not user input
  return node;
}

function selectedFromUrl(): string {
  const id = new URLSearchParams(location.search).get('e');
  return exerciseTexts.some((t) => t.id === id) ? id! : exerciseTexts[0].id;
}

class ExercisesPage {
  private readonly store = new ProgressStore(exerciseTexts.map((t) => t.id));
  private core: Judge | null = null;
  private catalogue = new Map<string, CatalogueEntry>();
  private readonly casesJson = new Map<string, string>();
  private selected = selectedFromUrl();
  private editor: CodeEditor | null = null;
  private running: { id: string; cancel(): void } | null = null;
  private saveTimer = 0;

  // Parts of the current exercise's view that a run updates.
  private runButton!: HTMLButtonElement;
  private stopButton!: HTMLButtonElement;
  private runStatus!: HTMLElement;
  private results!: HTMLElement;
  private solutionHost!: HTMLElement;
  private statusBadge!: HTMLElement;
  private statusNote!: HTMLElement;

  constructor(
    private readonly list: HTMLOListElement,
    private readonly summary: HTMLElement,
    private readonly host: HTMLElement,
    private readonly toolsStatus: HTMLElement,
    private readonly coreStatus: HTMLElement,
  ) {}

  async start(): Promise<void> {
    this.renderList();
    this.renderExercise(false);
    this.setUpProgressTools();
    window.addEventListener('popstate', () => this.select(selectedFromUrl(), false));
    warmSandbox();
    if (this.store.storageProblem) setStatus(this.toolsStatus, `Progress is not saved: ${this.store.storageProblem}.`, 'error');

    setStatus(this.coreStatus, 'Loading the judge (the wasm core)…');
    try {
      this.core = await loadJudge();
      const entries = this.core.judgeCatalogue();
      const judgeIds = entries.map((e) => e.id).join(', ');
      const pageIds = exerciseTexts.map((t) => t.id).join(', ');
      if (judgeIds !== pageIds) throw new Error(`the judge knows ${judgeIds}, the page lists ${pageIds}`);
      this.catalogue = new Map(entries.map((e) => [e.id, e]));
    } catch (error) {
      this.core = null;
      setStatus(this.coreStatus, `The judge could not be loaded, so Run is unavailable: ${(error as Error).message}`, 'error');
      return;
    }
    this.coreStatus.textContent = '';
    this.coreStatus.hidden = true;
    document.body.dataset.judgeReady = 'true';
    this.updateRunButton();
  }

  // ---- The list of exercises ----

  private renderList(): void {
    this.list.replaceChildren(
      ...exerciseTexts.map((text, i) => {
        const status = statusOf(this.store.progress, text.id);
        const link = el('a', { href: `?e=${text.id}`, 'aria-current': text.id === this.selected ? 'page' : undefined },
          el('span', { class: 'exercise-index' }, `${i + 1}.`), ' ',
          el('span', { class: 'exercise-title' }, text.title), ' ',
          el('span', { class: `badge ${status}`, 'data-testid': `state-${text.id}`, title: statusTitle(status, this.store.get(text.id).solvedAt) },
            statusLabel[status]));
        link.addEventListener('click', (event) => {
          if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
          event.preventDefault();
          this.select(text.id, true);
        });
        return el('li', {}, link);
      }),
    );
    // An exercise passed once stays counted while the learner experiments with it.
    const passed = exerciseTexts.filter((t) => this.store.get(t.id).solved).length;
    this.summary.textContent = `${passed} of ${exerciseTexts.length} passed`;
  }

  private select(id: string, push: boolean): void {
    if (id === this.selected && this.editor) return;
    this.saveNow();
    this.running?.cancel();
    this.running = null; // the new exercise's Run button starts enabled
    this.selected = id;
    if (push) history.pushState(null, '', `?e=${id}`);
    this.renderList();
    this.renderExercise(push);
  }

  // ---- One exercise ----

  private renderExercise(focusHeading: boolean): void {
    const text = exerciseTexts.find((t) => t.id === this.selected)!;
    const index = exerciseTexts.indexOf(text);
    const saved = this.store.get(text.id);
    this.editor?.destroy();

    const heading = el('h2', { id: 'exercise-title', tabindex: '-1' }, text.title);
    this.statusBadge = el('span', { class: 'badge', 'data-testid': 'exercise-state' });
    this.statusNote = el('span', { 'data-testid': 'exercise-state-note' });
    const editorHost = el('div', { class: 'editor-host', 'data-testid': 'editor' });

    this.runButton = el('button', { type: 'button', 'data-testid': 'run' }, 'Run');
    this.stopButton = el('button', { type: 'button', class: 'secondary', 'data-testid': 'stop', hidden: true }, 'Stop');
    const resetButton = el('button', { type: 'button', class: 'secondary', 'data-testid': 'reset' }, 'Reset to the starter');
    const timeout = el('select', { id: 'timeout', 'data-testid': 'timeout' });
    for (const s of TIMEOUT_CHOICES) timeout.append(el('option', { value: String(s) }, `${s} s`));
    timeout.value = String(this.store.progress.timeoutSeconds);
    timeout.addEventListener('change', () => this.store.setTimeout(Number(timeout.value)));

    this.runStatus = el('p', { class: 'status run-status', 'data-testid': 'run-status', role: 'status' });
    // Not a live region: the status line above announces the verdict in one sentence.
    this.results = el('div', { class: 'results', 'data-testid': 'results' });
    this.solutionHost = el('div', { class: 'solution' });

    this.host.replaceChildren(
      el('p', { class: 'exercise-number' }, `Exercise ${index + 1} of ${exerciseTexts.length} · `, this.statusBadge, this.statusNote),
      heading,
      html(text.statement, 'statement'),
      el('h3', {}, 'Signature'),
      this.signature(text),
      el('h3', { id: 'editor-heading' }, 'Your code'),
      editorHost,
      el('p', { class: 'editor-help' },
        el('kbd', {}, 'Ctrl'), '+', el('kbd', {}, 'Enter'), ' runs. ', el('kbd', {}, 'Tab'), ' indents; press ',
        el('kbd', {}, 'Esc'), ' then ', el('kbd', {}, 'Tab'), ' to leave the editor. Your code is saved in this browser as you type.'),
      el('div', { class: 'toolbar' },
        this.runButton, this.stopButton, resetButton,
        el('span', { class: 'control inline' }, el('label', { for: 'timeout' }, 'Time limit per test'), timeout)),
      this.runStatus,
      this.results,
      el('h3', {}, 'Hints'),
      el('div', { class: 'hints' },
        ...text.hints.map((hint, i) =>
          el('details', { class: 'hint', 'data-testid': `hint-${i + 1}` }, el('summary', {}, `Hint ${i + 1}`), html(hint)))),
      el('h3', {}, 'Reference solution'),
      this.solutionHost,
    );

    this.editor = createEditor(editorHost, {
      code: saved.code ?? text.starter,
      label: `Your code for ${text.id}`,
      onChange: (code) => {
        clearTimeout(this.saveTimer);
        this.saveTimer = window.setTimeout(() => this.store.update(text.id, { code }), 300);
      },
      onRun: () => void this.run(),
    });
    this.runButton.addEventListener('click', () => void this.run());
    this.stopButton.addEventListener('click', () => this.running?.cancel());
    resetButton.addEventListener('click', () => {
      if (this.editor!.getCode() !== text.starter && !confirm('Replace your code with the starter? Your current code will be lost.')) return;
      this.editor!.setCode(text.starter);
      this.saveNow();
    });

    this.updateBadge();
    this.updateSolution();
    this.updateRunButton();
    if (saved.lastRun) this.showRun(saved.lastRun, true);
    document.title = `${text.title} · Exercises · Attention Anatomy`;
    if (focusHeading) heading.focus();
  }

  private signature(text: ExerciseText): HTMLElement {
    const names = text.parameters.map((p) => p.name).join(', ');
    const table = el('table', { class: 'data parameters' },
      el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'argument'), el('th', { scope: 'col' }, 'shape or type'),
        el('th', { scope: 'col' }, 'note'))),
      el('tbody', {},
        ...text.parameters.map((p) => el('tr', {}, el('td', {}, el('code', {}, p.name)), el('td', {}, el('code', {}, p.type)),
          el('td', {}, p.note ?? ''))),
        el('tr', { class: 'returns' }, el('td', {}, 'returns ', el('code', {}, text.returns.name)),
          el('td', {}, el('code', {}, text.returns.type)), el('td', {}, text.returns.note ?? ''))));
    // The Python signature beside the JavaScript one: tools/judge.py judges the same exercise from a .py file.
    const language = (label: string, code: string, testid: string) =>
      el('div', { class: 'signature-language' }, el('p', { class: 'language-label' }, label),
        el('pre', { role: 'region', 'aria-label': `${label} signature`, tabindex: '0', 'data-testid': testid }, el('code', {}, code)));
    const file = `my_${/^def (\w+)\(/.exec(text.python)?.[1] ?? text.id}.py`;
    return el('div', { class: 'signature' },
      el('div', { class: 'signature-languages' },
        language('JavaScript', `function ${text.id}(${names})`, 'js-signature'),
        language('Python', text.python, 'python-signature')),
      el('p', { class: 'python-help' }, 'To write it in Python with NumPy instead, save the function in a file and run ',
        el('code', {}, `python3 tools/judge.py ${text.id} ${file}`), ' in the project’s source (', ...sourceArchiveLink(),
        ', unpacked, or a clone of the repository; ', el('a', { href: cited.readme }, 'its README'), ' says how to build it)',
        ': the same judge prints the same report.'),
      el('div', { class: 'scroll-x', role: 'region', 'aria-label': 'Arguments', tabindex: '0' }, table));
  }

  private updateBadge(): void {
    const status = statusOf(this.store.progress, this.selected);
    this.statusBadge.className = `badge ${status}`;
    this.statusBadge.textContent = statusLabel[status];
    const date = solvedDate(this.store.get(this.selected).solvedAt);
    this.statusNote.textContent = status === 'passed-once'
      ? ` every test passed ${date ? `on ${date}` : 'in an earlier run'}; the latest run did not pass`
      : status === 'passed' && date ? ` first on ${date}` : '';
  }

  private updateSolution(): void {
    const text = exerciseTexts.find((t) => t.id === this.selected)!;
    if (this.store.get(text.id).solved) {
      this.solutionHost.replaceChildren(
        el('details', { 'data-testid': 'solution' }, el('summary', {}, 'Show the reference solution'),
          el('pre', { class: 'solution-code', role: 'region', 'aria-label': 'Reference solution', tabindex: '0' },
            el('code', {}, text.solution))));
    } else {
      this.solutionHost.replaceChildren(el('p', { class: 'locked', 'data-testid': 'solution-locked' },
        'Pass every test to see a reference solution to compare with yours.'));
    }
  }

  private updateRunButton(): void {
    const busy = this.running !== null;
    this.runButton.disabled = busy || !this.core;
    this.runButton.textContent = busy ? 'Running…' : 'Run';
    this.stopButton.hidden = !busy;
  }

  private saveNow(): void {
    if (!this.editor) return;
    clearTimeout(this.saveTimer);
    const code = this.editor.getCode();
    if (code !== (this.store.get(this.selected).code ?? exerciseTexts.find((t) => t.id === this.selected)!.starter)) {
      this.store.update(this.selected, { code });
    }
  }

  // ---- A run ----

  private async run(): Promise<void> {
    if (this.running || !this.core || !this.editor) return;
    const id = this.selected;
    const entry = this.catalogue.get(id)!;
    const code = this.editor.getCode();
    this.saveNow();
    let casesJson = this.casesJson.get(id);
    if (!casesJson) {
      casesJson = JSON.stringify(this.core.judgeCases(id));
      this.casesJson.set(id, casesJson);
    }
    const timeoutMs = this.store.progress.timeoutSeconds * 1000;

    const abort = new AbortController();
    const token = { id, cancel: () => abort.abort() };
    this.running = token;
    this.updateRunButton();
    this.results.setAttribute('aria-busy', 'true');
    // The report and messages of the run before are gone: they are not this run's.
    this.results.replaceChildren();
    let done = 0;
    setStatus(this.runStatus, `Running ${entry.cases} tests…`);

    const result = await runInSandbox({
      code,
      name: id,
      casesJson,
      caseCount: entry.cases,
      timeoutMs,
      onCase: () => {
        done += 1;
        setStatus(this.runStatus, `Running: ${done} of ${entry.cases} tests done…`);
      },
      signal: abort.signal,
    });
    if (this.running !== token) return; // the learner moved to another exercise; nothing to show
    this.running = null;
    this.updateRunButton();
    this.results.removeAttribute('aria-busy');
    if (result.stopped) {
      setStatus(this.runStatus, 'Stopped before every test had run: no verdict for this run.');
      return;
    }

    const judgeStart = performance.now();
    let report: JudgeReport;
    try {
      report = this.core.judgeOutputs(id, result.outputs);
    } catch (error) {
      setStatus(this.runStatus, `The judge failed: ${(error as Error).message}`, 'error');
      return;
    }
    const judgeMs = performance.now() - judgeStart;

    const lastRun: LastRun = {
      report,
      syntax: result.syntax,
      timedOutAt: result.timedOutAt,
      timeoutMs,
      runMs: result.elapsedMs,
      judgeMs,
      mistakeTitles: Object.fromEntries(entry.mistakes.map((m) => [m.id, m.title])),
      code,
      at: new Date().toISOString(),
    };
    this.store.update(id, { status: report.passed ? 'passed' : 'failing', lastRun });
    this.renderList();
    this.updateBadge();
    this.updateSolution();
    this.showRun(lastRun, false);
  }

  /**
   * Draws a run's report under the editor: the one just made (which also moves the
   * editor to a syntax error's line), or the one kept from before a reload.
   */
  private showRun(last: LastRun, restored: boolean): void {
    const { report } = last;
    const children: HTMLElement[] = [];
    if (last.syntax) {
      const s = last.syntax;
      const where = s.line ? ` on line ${s.line}${s.column ? `, column ${s.column}` : ''}` : '';
      const box = el('div', { class: 'syntax-error', 'data-testid': 'syntax-error', role: restored ? undefined : 'alert' },
        el('p', {}, el('strong', {}, 'The code does not parse'), `${where}: `, el('code', {}, s.message)));
      if (s.line) {
        const button = el('button', { type: 'button', class: 'small secondary' }, `Show line ${s.line}`);
        button.addEventListener('click', () => this.editor?.showLine(s.line!, s.column ?? 1));
        box.append(button);
        if (!restored) {
          this.editor?.showLine(s.line, s.column ?? 1);
          this.runButton.focus();
        }
      }
      children.push(box);
    } else if (last.timedOutAt !== null) {
      children.push(el('div', { class: 'timed-out', 'data-testid': 'timed-out', role: restored ? undefined : 'alert' },
        el('p', {}, el('strong', {}, `Test ${last.timedOutAt + 1} timed out after ${seconds(last.timeoutMs)}.`),
          ' The sandbox was stopped; an endless loop is the usual cause. The time limit per test is set next to Run.')));
    }
    children.push(renderReport(report, {
      mistakeTitles: new Map(Object.entries(last.mistakeTitles)),
      showLine: (line, column) => this.editor?.showLine(line, column),
      runMs: last.runMs,
      judgeMs: last.judgeMs,
      summaryOnly: last.syntax !== null,
    }));
    this.results.replaceChildren(...children);
    this.results.dataset.runMs = String(Math.round(last.runMs));
    this.results.dataset.restored = String(restored);
    const verdict = report.passed
      ? `Passed: all ${report.total} tests.`
      : `${report.passed_count} of ${report.total} tests passed${report.diagnosis ? `: ${report.diagnosis.title}` : ''}.`;
    if (!restored) {
      setStatus(this.runStatus, verdict);
      return;
    }
    const when = new Date(last.at);
    const at = Number.isNaN(when.getTime()) ? 'earlier' : `on ${when.toLocaleString()}`;
    const edited = this.editor && this.editor.getCode() !== last.code
      ? ' Your code has changed since; Run to judge it as it is now.'
      : '';
    setStatus(this.runStatus, `Your last run, ${at}, kept in this browser: ${verdict}${edited}`);
  }

  // ---- Export, import ----

  private setUpProgressTools(): void {
    const exportButton = byId<HTMLButtonElement>('export-progress');
    const importInput = byId<HTMLInputElement>('import-progress');
    exportButton.addEventListener('click', () => {
      this.saveNow();
      const blob = new Blob([this.store.exportText()], { type: 'application/json' });
      const url = URL.createObjectURL(blob);
      const link = el('a', { href: url, download: `attention-anatomy-exercises-${new Date().toISOString().slice(0, 10)}.json` });
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 1000);
      setStatus(this.toolsStatus, 'Progress exported: the file is in your downloads.');
    });
    importInput.addEventListener('change', async () => {
      const file = importInput.files?.[0];
      importInput.value = '';
      if (!file) return;
      try {
        const { imported, skipped } = this.store.importText(await file.text());
        this.renderList();
        this.renderExercise(false);
        const extra = skipped.length ? ` Skipped ${skipped.length} unknown: ${skipped.join(', ')}.` : '';
        setStatus(this.toolsStatus, `Imported ${imported.length} exercise${imported.length === 1 ? '' : 's'} from ${file.name}.${extra}`);
      } catch (error) {
        const reason = error instanceof ImportError ? error.message : `it could not be read (${(error as Error).message})`;
        setStatus(this.toolsStatus, `${file.name} was not imported: ${reason}. Nothing was changed.`, 'error');
      }
    });
  }
}

export function mountExercisesPage(): Promise<void> {
  const page = new ExercisesPage(
    byId<HTMLOListElement>('exercise-list'),
    byId('progress-summary'),
    byId('exercise'),
    byId('progress-status'),
    byId('core-status'),
  );
  return page.start();
}
