// The messages between the page (sandbox.ts) and its sandbox worker (sandbox-worker.ts).
import type { CaseOutput } from './runner.mjs';

export interface SandboxRequest {
  /** The learner's code, a script that defines the function. */
  code: string;
  /** The function to call: the exercise's id. */
  name: string;
  /** The judge's cases, as judgeCases returned them ({cases: [{name, args}]}). */
  casesJson: string;
}

export type SandboxMessage =
  | { kind: 'ready' }
  | { kind: 'syntax'; message: string; line: number | null; column: number | null }
  | { kind: 'failed'; error: string }
  | { kind: 'case'; index: number; output: CaseOutput }
  | { kind: 'done' };
