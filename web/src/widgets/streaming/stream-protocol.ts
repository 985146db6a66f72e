// Messages between the StreamingLLM widget's workers (stream-workers.ts) and each of them
// (stream-worker.ts).
import type { ReferencePart, StreamModelFiles, StreamModelInfo, StreamOptionProblem, StreamOptions, StreamReport } from '../../lib/stream-core';

export type StreamRequest =
  // coreUrl: lib/stream-core.ts as the page loaded it (its streamCoreUrl); wasm: the page's compile, shared
  | { kind: 'load'; id: number; coreUrl: string; files: StreamModelFiles; wasm?: WebAssembly.Module }
  | { kind: 'check'; id: number; options: StreamOptions }                  // the option the core refuses, if any
  | { kind: 'count'; id: number; options: StreamOptions }                  // how many tokens a run decodes
  | { kind: 'run'; id: number; options: StreamOptions }                    // the three cache policies
  | { kind: 'losses'; id: number; options: StreamOptions; from: number; to: number }  // part of the reference
  | { kind: 'continuation'; id: number; options: StreamOptions }           // the rest of it
  | { kind: 'attach'; id: number; reference: ReferencePart & { continuation: number[] } };

export type StreamMessage =
  | { kind: 'loaded'; id: number; info: StreamModelInfo }
  | { kind: 'checked'; id: number; problem: StreamOptionProblem | null }
  | { kind: 'count'; id: number; tokens: number }
  | { kind: 'policies'; id: number; report: StreamReport }
  | { kind: 'losses'; id: number; losses: number[]; ms: number }
  | { kind: 'continuation'; id: number; ids: number[]; ms: number }
  | { kind: 'report'; id: number; report: StreamReport }
  | { kind: 'error'; id: number; message: string };
