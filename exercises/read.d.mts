// Types of read.mjs, for the page's build (web/vite.config.ts).
export interface Parameter {
  name: string;
  /** Shape or type, e.g. "[B, H, T, D]" or "boolean". */
  type: string;
  note?: string;
}

export interface MistakeEdits {
  /** A mistake's id in the judge's catalogue; or `partial`, the name of code only some failing cases show as a mistake. */
  mistake?: string;
  partial?: string;
  note: string;
  edits: { replace: string; with: string }[];
}

export interface Exercise {
  id: string;
  folder: string;
  title: string;
  statement: string;
  parameters: Parameter[];
  returns: Parameter;
  python: string;
  hints: string[];
  starter: string;
  solution: string;
  solutionPython: string;
  otherPython: Record<string, string>;
  mistakes: Record<'solution.js' | 'solution.py', MistakeEdits[]>;
}

export const exercisesDir: string;
export function readExercises(root?: string): Exercise[];
export function pageText(exercise: Exercise): Pick<Exercise, 'id' | 'title' | 'statement' | 'parameters' | 'returns' | 'python' | 'starter' | 'hints' | 'solution'>;
export function applyEdits(source: string, edits: MistakeEdits['edits'], label: string): string;
export function mistakeSource(exercise: Exercise, name: string, file?: 'solution.js' | 'solution.py'): string;
