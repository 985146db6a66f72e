// The learner's code and progress, kept in localStorage and carried between
// browsers as a JSON file (export downloads it, import reads it back).
//
// Stored under one key, as
//   {format, version, timeoutSeconds, exercises: {id: {code?, status?, solved?, solvedAt?, updated?, lastRun?}}}
// status is the last run's verdict; solved stays true once every test has passed,
// which is what reveals the reference solution, and solvedAt says when that first
// was. lastRun is what that run showed (the judge's report and how the run went), so
// a reload shows the report again.
import type { JudgeReport } from '../lib/core-types';
import type { SyntaxProblem } from './sandbox';

// passed-once: every test passed in an earlier run, not in the latest.
export type Status = 'not-tried' | 'failing' | 'passed' | 'passed-once';

export interface ExerciseProgress {
  code?: string;
  status?: 'failing' | 'passed';
  solved?: boolean;
  /** ISO time of the first run that passed every test. */
  solvedAt?: string;
  /** ISO time of the last change. */
  updated?: string;
  lastRun?: LastRun;
}

/** What the last run of an exercise showed: enough to draw its report again. */
export interface LastRun {
  report: JudgeReport;
  syntax: SyntaxProblem | null;
  /** The test that ran out of time (0-based), or null. */
  timedOutAt: number | null;
  timeoutMs: number;
  runMs: number;
  judgeMs: number;
  /** Mistake id -> title, for the report's diagnosis of each test. */
  mistakeTitles: Record<string, string>;
  /** The code that ran, to tell the learner whether it has been edited since. */
  code: string;
  /** ISO time of the run. */
  at: string;
}

export interface Progress {
  timeoutSeconds: number;
  exercises: Record<string, ExerciseProgress>;
}

export const STORAGE_KEY = 'attention-anatomy.exercises';
export const FILE_FORMAT = 'attention-anatomy-exercises';
const VERSION = 1;
export const TIMEOUT_CHOICES = [1, 3, 5, 10, 30];
export const DEFAULT_TIMEOUT_SECONDS = 3;
const MAX_IMPORT_BYTES = 5 * 1024 * 1024;

export class ImportError extends Error {}

const isNumber = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);

/**
 * A stored last run, when it has the shape this page draws; anything else is
 * dropped (it only repeats a report that the next run makes again).
 */
function parseLastRun(raw: unknown): LastRun | undefined {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return undefined;
  const run = raw as Record<string, unknown>;
  const report = run.report as Record<string, unknown> | null;
  const reportOk = !!report && typeof report === 'object' && typeof report.passed === 'boolean' && isNumber(report.passed_count) &&
    isNumber(report.total) && Array.isArray(report.cases) && !!report.tolerance && typeof report.tolerance === 'object';
  const syntax = run.syntax as Record<string, unknown> | null;
  const syntaxOk = syntax === null || (!!syntax && typeof syntax === 'object' && typeof syntax.message === 'string');
  const titles = run.mistakeTitles;
  const titlesOk = !!titles && typeof titles === 'object' && !Array.isArray(titles) && Object.values(titles).every((t) => typeof t === 'string');
  if (!reportOk || !syntaxOk || !titlesOk || !(run.timedOutAt === null || isNumber(run.timedOutAt)) || !isNumber(run.timeoutMs) ||
    !isNumber(run.runMs) || !isNumber(run.judgeMs) || typeof run.code !== 'string' || typeof run.at !== 'string') return undefined;
  return run as unknown as LastRun;
}

export function statusOf(progress: Progress, id: string): Status {
  const entry = progress.exercises[id];
  if (entry?.status === 'failing' && entry.solved) return 'passed-once';
  return entry?.status ?? 'not-tried';
}

/**
 * Checks a parsed file or stored value and keeps what is valid. Throws ImportError
 * saying what is wrong; unknown exercise ids are skipped and returned by name.
 */
export function parseProgress(value: unknown, knownIds: readonly string[]): { progress: Progress; skipped: string[] } {
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new ImportError('the file does not hold a JSON object');
  const data = value as Record<string, unknown>;
  if (data.format !== FILE_FORMAT) {
    throw new ImportError(`it is not an exercises file from this page (its "format" field should be "${FILE_FORMAT}")`);
  }
  if (typeof data.version !== 'number' || data.version > VERSION) {
    throw new ImportError(`its version, ${JSON.stringify(data.version)}, is not one this page reads (up to ${VERSION})`);
  }
  const exercises = data.exercises;
  if (!exercises || typeof exercises !== 'object' || Array.isArray(exercises)) {
    throw new ImportError('it has no "exercises" object');
  }
  const progress: Progress = {
    timeoutSeconds: TIMEOUT_CHOICES.includes(data.timeoutSeconds as number) ? (data.timeoutSeconds as number) : DEFAULT_TIMEOUT_SECONDS,
    exercises: {},
  };
  const skipped: string[] = [];
  for (const [id, raw] of Object.entries(exercises as Record<string, unknown>)) {
    if (!knownIds.includes(id)) {
      skipped.push(id);
      continue;
    }
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new ImportError(`the entry for ${id} is not an object`);
    const entry = raw as Record<string, unknown>;
    if (entry.code !== undefined && typeof entry.code !== 'string') throw new ImportError(`the code for ${id} is not text`);
    if (entry.status !== undefined && entry.status !== 'failing' && entry.status !== 'passed') {
      throw new ImportError(`the status of ${id} is ${JSON.stringify(entry.status)}, not "failing" or "passed"`);
    }
    if (entry.solved !== undefined && typeof entry.solved !== 'boolean') throw new ImportError(`"solved" for ${id} is not true or false`);
    progress.exercises[id] = {
      code: entry.code as string | undefined,
      status: entry.status as ExerciseProgress['status'],
      solved: (entry.solved as boolean | undefined) || entry.status === 'passed' || undefined,
      solvedAt: typeof entry.solvedAt === 'string' && !Number.isNaN(Date.parse(entry.solvedAt)) ? entry.solvedAt : undefined,
      updated: typeof entry.updated === 'string' ? entry.updated : undefined,
      lastRun: parseLastRun(entry.lastRun),
    };
  }
  return { progress, skipped };
}

function serialise(progress: Progress): string {
  return JSON.stringify({ format: FILE_FORMAT, version: VERSION, ...progress }, null, 2);
}

export class ProgressStore {
  progress: Progress = { timeoutSeconds: DEFAULT_TIMEOUT_SECONDS, exercises: {} };
  /** Why progress cannot be saved (storage blocked or full), or null. */
  storageProblem: string | null = null;

  constructor(private readonly knownIds: readonly string[]) {
    let text: string | null = null;
    try {
      text = localStorage.getItem(STORAGE_KEY);
    } catch (error) {
      this.storageProblem = `this browser does not let the page use local storage (${(error as Error).message})`;
    }
    if (text) {
      try {
        this.progress = parseProgress(JSON.parse(text), knownIds).progress;
      } catch (error) {
        // Keep the unreadable value aside rather than overwrite it without a trace.
        try {
          localStorage.setItem(`${STORAGE_KEY}.unreadable`, text);
        } catch {
          // nothing more to do
        }
        this.storageProblem = `the saved progress could not be read (${(error as Error).message}) and was set aside`;
      }
    }
  }

  get(id: string): ExerciseProgress {
    return this.progress.exercises[id] ?? {};
  }

  update(id: string, change: ExerciseProgress): void {
    const now = new Date().toISOString();
    const entry = { ...this.get(id), ...change, updated: now };
    if (entry.status === 'passed') {
      entry.solvedAt ??= now;
      entry.solved = true;
    }
    this.progress.exercises[id] = entry;
    this.save();
  }

  setTimeout(seconds: number): void {
    this.progress.timeoutSeconds = seconds;
    this.save();
  }

  save(): void {
    try {
      localStorage.setItem(STORAGE_KEY, serialise(this.progress));
      if (this.storageProblem?.startsWith('saving failed')) this.storageProblem = null;
    } catch (error) {
      this.storageProblem = `saving failed: ${(error as Error).message}`;
    }
  }

  /** The file export downloads. */
  exportText(): string {
    return JSON.stringify({ format: FILE_FORMAT, version: VERSION, exportedAt: new Date().toISOString(), ...this.progress }, null, 2);
  }

  /**
   * Reads an exported file: the exercises it holds replace the stored ones, others
   * are kept. Throws ImportError with a message for the learner.
   */
  importText(text: string): { imported: string[]; skipped: string[] } {
    if (text.length > MAX_IMPORT_BYTES) throw new ImportError('the file is larger than 5 MB, too large to be an exercises file');
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw new ImportError(`it is not valid JSON (${(error as Error).message})`);
    }
    const { progress, skipped } = parseProgress(value, this.knownIds);
    Object.assign(this.progress.exercises, progress.exercises);
    if ((value as Record<string, unknown>).timeoutSeconds !== undefined) this.progress.timeoutSeconds = progress.timeoutSeconds;
    this.save();
    return { imported: Object.keys(progress.exercises), skipped };
  }
}
