// The StreamingLLM widget's session (wasm/bindings_stream.cpp): a long text decoded one
// token at a time through a KV cache of at most W entries under each eviction policy,
// against recomputing every prediction from the last W tokens, by the core's
// stream_report, the code `attn stream` runs (in the StreamingLLM widget's workers); and
// the sink scores of a model's heads (the notebook's sink-scores figure). A checkpoint
// attn train wrote is read by the notebook's module (attention_notebook); a llama2.c file
// (stories260K) by the trained-model widget's (attention_trained), which has llama2.c's
// reader and is fetched only when one is opened.
import type { ModelConfig } from './core-types';
import { loadNotebookModule, notebookWasmUrl } from './notebook-core';
import trainedWasmUrl from '@wasm/attention_trained.wasm?url';
import { safetensorsHeader } from './safetensors.mjs';
import { unwrapResult } from './wasm-result';
import { compileWasm, useCompiled } from './wasm-compile';

export type PolicyName = 'keep_all' | 'sliding_window' | 'sinks_and_window' | 'recompute_window';

export interface PolicyReport {
  policy: PolicyName;
  losses: number[];                          // [N - 1]: losses[t] predicts token t + 1, nats
  mean_loss_after_first_eviction: number;    // over losses[W ..]
  mean_loss: number;
  departs_from_reference_at?: number | null; // not the reference's; null: never by more than departure_nats
  continuation?: { ids: number[]; text: string };
}

export interface StreamReport {
  tokens: number;                // decoded (at most `length`)
  text_tokens: number;           // the whole text's, BOS included
  window: number;
  sinks: number;
  first_eviction_at: number;     // W: losses[W] is the first after an eviction
  departure_nats: number;
  trained_positions: number;     // the context the model was trained on
  policies: PolicyReport[];      // keep_all, sliding_window, sinks_and_window, then (once added) recompute_window
  policies_ms: number;           // the core's time for the three cache policies
  reference_ms: number;          // and for the reference (0 until it is added)
  ms: number;                    // their sum
}

export interface StreamModelInfo {
  config: ModelConfig;
  vocab_size: number;
  context: number;
  attention_sinks: boolean;
}

/** A model's files as the worker receives them. */
export type StreamModelFiles =
  | { format: 'checkpoint'; config: unknown; safetensors: Uint8Array; header: unknown; tokenizer: unknown }
  | { format: 'llama2c'; model: Uint8Array; tokenizer: Uint8Array };

async function fetchOk(url: string): Promise<Response> {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return response;
}

/** A file's bytes; throws naming the url when it cannot be fetched. */
export async function fetchBytes(url: string): Promise<Uint8Array> {
  return new Uint8Array(await (await fetchOk(url)).arrayBuffer());
}

/** A folder attn train wrote (config.json, model.safetensors, tokenizer.json), as the worker or a session takes it. */
export async function checkpointFiles(dir: string): Promise<StreamModelFiles> {
  const [config, safetensors, tokenizer] = await Promise.all([
    fetchOk(`${dir}/config.json`).then((r) => r.json()), fetchBytes(`${dir}/model.safetensors`),
    fetchOk(`${dir}/tokenizer.json`).then((r) => r.json())]);
  return { format: 'checkpoint', config, safetensors, header: safetensorsHeader(safetensors, 'model.safetensors').header, tokenizer };
}

export interface StreamOptions { text: string; window: number; sinks: number; length: number; generate: number }

/** Part of the reference (predictions from .. to-1), as one worker computes it; ms: the core's time. */
export interface ReferencePart { losses: number[]; ms: number }

/** One pass over BOS and a text: each head's first-token score and, with learned sink logits, its share to the sink. */
export interface HeadScores {
  tokens: number;
  queries_from: number;                                     // the scores average queries queries_from .. tokens - 1
  first_token: { heads: number[][]; uniform_baseline: number };  // [L][Hq]
  learned_sink: { heads: number[][] } | null;
}

/** An option run() refuses: which one, and the core's words. */
export interface StreamOptionProblem { error: string; option: 'window' | 'sinks' | 'length' | 'generate' }

export class StreamError extends Error {}

/** The module's StreamSession as wasm/bindings_stream.cpp binds it (tests/wasm/interface.test.mjs holds it to its declared options). */
export interface RawSession {
  loadCheckpoint(config: unknown, safetensors: Uint8Array, header: unknown, tokenizer: unknown): string;
  loadLlama2c(model: Uint8Array, tokenizer: Uint8Array): string;
  run(options: StreamOptions & { reference: boolean }): string;
  addReference(): string;
  tokens(options: StreamOptions): string;
  referenceLosses(options: StreamOptions & { from: number; to: number }): string;
  referenceContinuation(options: StreamOptions): string;
  attachReference(reference: { losses: number[]; continuation: number[]; ms: number }): string;
  headScores(options: { text: string }): string;
  check(options: StreamOptions): string;
  delete(): void;
}

const unwrap = <T>(out: unknown): T => unwrapResult<T>(out, (message) => new StreamError(message));

type StreamModule = { StreamSession: new () => RawSession };

/** The module that reads files of this format, and its .wasm. */
function moduleFor(format: StreamModelFiles['format']): { url: string; load: () => Promise<StreamModule> } {
  if (format === 'checkpoint') return { url: notebookWasmUrl, load: () => loadNotebookModule() as Promise<StreamModule> };
  return { url: trainedWasmUrl, load: () => loadTrainedCode().then((trained) => trained.loadModule() as unknown as Promise<StreamModule>) };
}

// The trained-model module's code, imported when a llama2.c file is first read (with no
// preloading, which a worker cannot do: vite.config.ts).
let trainedCode: Promise<typeof import('./trained-core')> | null = null;
function loadTrainedCode(): Promise<typeof import('./trained-core')> {
  trainedCode ??= import('./trained-core').catch((error: unknown) => {
    trainedCode = null;  // a failed fetch may be retried
    throw new Error(`the trained-model module, which reads llama2.c files, could not be loaded (${error instanceof Error ? error.message : String(error)})`);
  });
  return trainedCode;
}

/**
 * This module's own URL: the StreamingLLM widget's workers import it from there (the
 * file the page's thread already has, and with it the notebook module's glue) rather
 * than from a copy bundled into the worker's script.
 */
export const streamCoreUrl = import.meta.url;

/** The wasm that reads files of this format, compiled once for the page: its workers share it (StreamSession.open's `compiled`). */
export const compileStreamWasm = (format: StreamModelFiles['format']): Promise<WebAssembly.Module> => compileWasm(moduleFor(format).url);

/** One loaded model; run() decodes a text under every policy. */
export class StreamSession {
  private constructor(private readonly raw: RawSession, readonly info: StreamModelInfo) {}

  /** `compiled`: compileStreamWasm's module, from the page (a worker then compiles nothing of its own). */
  static async open(files: StreamModelFiles, compiled?: WebAssembly.Module): Promise<StreamSession> {
    const { url, load } = moduleFor(files.format);
    if (compiled) useCompiled(url, compiled);
    const module = await load();
    const raw = new module.StreamSession();
    try {
      const info = unwrap<StreamModelInfo>(files.format === 'checkpoint'
        ? raw.loadCheckpoint(files.config, files.safetensors, files.header, files.tokenizer)
        : raw.loadLlama2c(files.model, files.tokenizer));
      return new StreamSession(raw, info);
    } catch (error) {
      raw.delete();
      throw error;
    }
  }

  /** The three cache policies, without the reference (which costs about W times one of them). */
  runPolicies(options: StreamOptions): StreamReport {
    return unwrap<StreamReport>(this.raw.run({ ...options, reference: false }));
  }

  /** The last runPolicies' report with the reference added. */
  addReference(): StreamReport {
    return unwrap<StreamReport>(this.raw.addReference());
  }

  /** How many tokens a run on these options decodes. */
  tokens(options: StreamOptions): number {
    return unwrap<{ tokens: number }>(this.raw.tokens(options)).tokens;
  }

  /** Part of the reference: the losses of predictions from .. to-1 (needs no run first). */
  referenceLosses(options: StreamOptions, from: number, to: number): ReferencePart {
    return unwrap<ReferencePart>(this.raw.referenceLosses({ ...options, from, to }));
  }

  /** The rest of the reference: its greedy continuation of the text. */
  referenceContinuation(options: StreamOptions): { ids: number[]; ms: number } {
    return unwrap<{ ids: number[]; ms: number }>(this.raw.referenceContinuation(options));
  }

  /** The last runPolicies' report completed with a reference joined from its parts. */
  attachReference(reference: { losses: number[]; continuation: number[]; ms: number }): StreamReport {
    return unwrap<StreamReport>(this.raw.attachReference(reference));
  }

  /** null when run() takes these options, else the option the core refuses and its words (no text is read). */
  check(options: StreamOptions): StreamOptionProblem | null {
    const answer = JSON.parse(this.raw.check(options)) as Partial<StreamOptionProblem>;
    return answer.error === undefined ? null : answer as StreamOptionProblem;
  }

  headScores(text: string): HeadScores {
    return unwrap<HeadScores>(this.raw.headScores({ text }));
  }

  delete(): void {
    this.raw.delete();
  }
}
