// The exercise judge (wasm/bindings_judge.cpp: core/judge), typed: a wasm module of
// its own, loaded by the exercises page only, so the chapters' module carries none
// of it and the exercises page none of theirs.
import createAnatomyJudge from '@wasm/attention_judge.js';
import wasmUrl from '@wasm/attention_judge.wasm?url';
import { CoreError } from './core';
import type { CatalogueEntry, JudgeCases, JudgeReport } from './core-types';
import { moduleLoader } from './wasm-compile';
import { unwrapResult } from './wasm-result';

export interface Judge {
  judgeCatalogue(): CatalogueEntry[];
  judgeCases(exercise: string): JudgeCases;
  /** outputs: [{value} | {error}] per case, in the order of judgeCases. */
  judgeOutputs(exercise: string, outputs: unknown[]): JudgeReport;
}

type RawJudge = {
  judgeCatalogue(): string;
  judgeCases(exercise: string): string;
  judgeOutputs(exercise: string, outputs: string): string;
};

const unwrap = <T>(out: unknown): T => unwrapResult<T>(out, (message) => new CoreError(message));

/** Loads the judge's module (fetch and compile, streamed) the first time; later calls share it. */
export const loadJudge = moduleLoader(createAnatomyJudge, wasmUrl, (module): Judge => {
  const raw = module as RawJudge;
  return {
    judgeCatalogue: () => unwrap(raw.judgeCatalogue()),
    judgeCases: (exercise) => unwrap(raw.judgeCases(exercise)),
    judgeOutputs: (exercise, outputs) => unwrap(raw.judgeOutputs(exercise, JSON.stringify(outputs))),
  };
});
