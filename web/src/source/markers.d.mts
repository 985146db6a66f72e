// Types of markers.mjs (plain JavaScript so that node can run it without a build step).
import type { Operation, SectionSpec } from './sections.mjs';

/** Lines are 1-based and inclusive; the marker lines themselves are outside. */
export interface SectionRange {
  file: string;
  startLine: number;
  endLine: number;
}

export interface MarkerPair {
  id: string;
  file: string;
  openLine: number;
  closeLine: number;
}

/** A function's shape contract: the `// x: [..] -> [..]` lines above its declaration in `header`. */
export interface Contract {
  name: string;
  header: string;
  line: number;
  shapes: string[];
}

export interface CheckedSource {
  /** Only the files some section lives in: path from the repository root -> text. */
  files: Record<string, string>;
  sections: Record<string, SectionRange>;
  /** keyLines[operation id][view index][note index]: the lines the note is about. */
  keyLines: Record<string, number[][][]>;
  /** Section id -> the shape contracts of the functions it defines. */
  contracts: Record<string, Contract[]>;
  errors: string[];
}

export declare const SCANNED_FOLDERS: string[];
export declare function parseMarkers(file: string, text: string): { pairs: MarkerPair[]; errors: string[]; unpaired: string[] };
export declare function linesContaining(lines: string[], ranges: SectionRange[], needle: string): number[];
export declare function checkSources(
  sources: Record<string, string>,
  table: Record<string, SectionSpec>,
  operations: Operation[],
): CheckedSource;
export declare function loadAnatomySource(
  repoRoot: string,
  table: Record<string, SectionSpec>,
  operations: Operation[],
): CheckedSource & { scanned: string[] };
export declare function findContracts(
  sources: Record<string, string>,
  table: Record<string, SectionSpec>,
  sections: Record<string, SectionRange>,
): { contracts: Record<string, Contract[]>; errors: string[] };
export declare function describeErrors(errors: string[]): string;
