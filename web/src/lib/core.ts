// The chapters' wasm core as typed functions: one per export of the chapters' modules
// (wasm/bindings.cpp, bindings_config, bindings_rope, bindings_lessons, bindings_session),
// with its arguments and result (the shapes are in core-types.ts). Underneath, a call
// hands the core its options as the object itself (wasm/json_args.hpp's json_from_js:
// the chapters' modules carry no JSON parser) and the answer comes back as JSON
// text (maskTiles: an object); a core error comes back as {"error": ...} and is
// raised here as a CoreError with the core's own message. Each chapter loads its own
// module, once, shared by its widgets: chapter 1 attention_core (chapter-core.ts), the
// notebook attention_notebook (notebook-core.ts), each with only what its widgets call.
// This file loads neither, so importing CoreError or a type costs no module's glue.
import type {
  BuildInfo, CachePayload, Cost, CostOptions, ForwardOptions, ForwardResult, Lookup,
  LookupOptions, MaskSpec, ModelConfig, RopePairing, StepReport, TileResult,
} from './core-types';
import { unwrapResult } from './wasm-result';

export type * from './core-types';

export class CoreError extends Error {}

/** The KV-cache stepper's session (wasm/bindings_session.cpp); free it with delete(). */
export interface DecodeSession {
  /** Empties the cache, then runs the prompt through it. */
  prefill(tokens: number[]): StepReport;
  /** Decodes one more token through the cache. */
  step(token: number): StepReport;
  /** Runs several more tokens through the cache in one pass (a chunk after the cached ones). */
  append(tokens: number[]): StepReport;
  reset(): void;
  delete(): void;
}

/**
 * Every export the chapters' modules have, typed (the exercise judge is lib/judge-core.ts;
 * the trace, the checks and the checkpoint export are the trace viewer's, lib/trace-viewer-core.ts).
 */
export interface Core {
  forward(options: ForwardOptions): ForwardResult;
  config(preset: string): ModelConfig;
  cachePayload(config: ModelConfig): CachePayload;
  buildInfo(): BuildInfo;
  maskTiles(spec: MaskSpec, tileQ: number, tileK: number): TileResult;
  softLookup(options: LookupOptions): Lookup;
  /** [positions][head_dim / 2] */
  ropeAngles(options: { head_dim: number; theta: number; positions: number[] }): { angles: number[][] };
  /** [positions][dh]: the same vector turned to each position. */
  ropeRotate(options: { vector: number[]; positions: number[]; theta: number; pairing: RopePairing }): { rotated: number[][] };
  /** [P][P]: q turned to position m dotted with k turned to position n. */
  ropeScores(options: { q: number[]; k: number[]; positions: number[]; theta: number; pairing: RopePairing }): { scores: number[][] };
  attentionCost(options: CostOptions): Cost;
  decodeSession(options: { seed: number }): DecodeSession;
}

/** The embind module: functions taking objects, strings or numbers, returning JSON strings or objects. */
export type RawCore = Record<string, unknown> & {
  DecodeSession?: new (options: { seed: number }) => RawDecodeSession;
};

/** The module's DecodeSession as wasm/bindings_session.cpp binds it (tests/wasm/interface.test.mjs holds it to its declared options). */
export interface RawDecodeSession {
  prefill(options: { tokens: number[] }): string;
  step(options: { token: number }): string;
  append(options: { tokens: number[] }): string;
  reset(): void;
  delete(): void;
}

/** A result from the core: JSON text or an object; {error} becomes a CoreError. */
const unwrap = <T>(out: unknown): T => unwrapResult<T>(out, (message) => new CoreError(message));

/** The typed functions over a loaded module (`module` is its file, for the message when an export is missing). */
export function bindCore(loaded: unknown, module: string): Core {
  const raw = loaded as RawCore;
  const run = <T>(name: string, ...args: unknown[]): T => {
    const fn = raw[name];
    if (typeof fn !== 'function') throw new CoreError(`${module} has no function ${name}`);
    return unwrap<T>(fn.apply(raw, args));
  };
  return {
    forward: (options) => run('forward', options),
    config: (preset) => run('config', preset),
    cachePayload: (config) => run('cachePayload', config),
    buildInfo: () => run('buildInfo'),
    maskTiles: (spec, tileQ, tileK) => run('maskTiles', spec, tileQ, tileK),
    softLookup: (options) => run('softLookup', options),
    ropeAngles: (options) => run('ropeAngles', options),
    ropeRotate: (options) => run('ropeRotate', options),
    ropeScores: (options) => run('ropeScores', options),
    attentionCost: (options) => run('attentionCost', options),
    decodeSession: (options) => {
      if (typeof raw.DecodeSession !== 'function') throw new CoreError(`${module} has no DecodeSession`);
      const session = new raw.DecodeSession(options);
      return {
        prefill: (tokens) => unwrap(session.prefill({ tokens })),
        step: (token) => unwrap(session.step({ token })),
        append: (tokens) => unwrap(session.append({ tokens })),
        reset: () => session.reset(),
        delete: () => session.delete(),
      };
    },
  };
}
