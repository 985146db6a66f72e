// Types of runner.mjs.
import type { JudgeValue } from './codec.mjs';

export type CaseOutput = { value: JudgeValue } | { error: string };

export declare function errorLocation(error: unknown, file: string, lineOffset?: number): { line: number; column: number } | null;
export declare function errorText(error: unknown, file: string, lineOffset?: number): string;
export declare function isUnprintable(text: unknown): boolean;
export declare function missingFunctionText(name: string, found: unknown): string;
export declare function runCases(
  fn: (...args: unknown[]) => unknown,
  casesJson: string,
  post: (index: number, output: CaseOutput) => void,
  options?: { file?: string; lineOffset?: number },
): void;
