// A checkpoint `attn train` wrote, opened by the core in the page
// (wasm/bindings_checkpoint.cpp, in chapter 1's module, attention_core): the explorer's
// "trained on Shakespeare" weights, shipped in web/public/models/shakespeare/ with
// the record of how they were made. The module and the weights load only when a
// reader asks for them.
import { inBackgroundTask } from './background-task';
import type { ModelConfig } from './core-types';
import { loadChapterModule } from './chapter-core';
import { loadCheckpoint } from './checkpoint-load.mjs';
import type { HeadPatterns } from './trained-core';
import { unwrapResult } from './wasm-result';

/** Where the page ships the trained model (web/public/models/shakespeare/). */
export const shakespeareDir = './models/shakespeare';

export class CheckpointError extends Error {}

export interface CheckpointInfo {
  config: ModelConfig;
  vocab_size: number;
  parameters: number;
  context: number;                      // the positions it was trained on (BOS + context - 1 characters)
}

export interface CheckpointForward {
  tokens: number[][];                   // [1][T]: BOS, then one id per character
  labels: string[];                     // [T]: "BOS" and the characters ("\n" as \\n)
  layers: { probabilities: number[][][][]; v: number[][][][]; head_outputs: number[][][][] }[];
}

/** training.json, as attn train writes it (the fields the page shows). */
export interface TrainingRecord {
  command: string;
  corpus: { file: string; bytes: number; characters: number; distinct_characters: number; sha256: string };
  config: { hidden_size: number; num_hidden_layers: number; num_attention_heads: number; num_key_value_heads: number };
  settings: { steps: number; seed: number; batch: number; context: number; repeat_fraction: number; peak_learning_rate: number };
  threads: number;
  result: { steps: number; train_loss: number; heldout_loss: number; training_seconds: number; tokens_per_second: number };
  curve: { step: number; train_loss: number; heldout_loss: number }[];
  head_patterns: HeadPatterns;
}

export interface Checkpoint {
  info: CheckpointInfo;
  record: TrainingRecord;
  forward(text: string): CheckpointForward;
  /**
   * The patterns on BOS + text, and on `strings` random strings (seeds `seed` on) each
   * written twice, the induction score their mean; induction_text is the first string.
   */
  headPatterns(text: string, seed: number, strings?: number): HeadPatterns & { induction_text: string };
  loss(text: string): { loss: number; characters: number };
  generate(text: string, count: number): { text: string; ids: number[] };
}

/** The module's CheckpointSession as wasm/bindings_checkpoint.cpp binds it (tests/wasm/interface.test.mjs holds it to its declared options). */
export interface RawCheckpoint {
  load(config: unknown, safetensors: Uint8Array, header: unknown, tokenizer: unknown): string;
  forward(text: string, options: { capture: string[] }): string;
  headPatterns(text: string, seed: number, strings: number): string;
  loss(text: string): string;
  generate(text: string, count: number): string;
}

const unwrap = <T>(out: string): T => unwrapResult<T>(out, (message) => new CheckpointError(message));

async function fetchOk(url: string): Promise<Response> {
  const response = await fetch(url);
  if (!response.ok) throw new CheckpointError(`${url}: HTTP ${response.status}`);
  return response;
}

let opening: Promise<Checkpoint> | null = null;

/**
 * The shipped Shakespeare model, opened once; later calls share it. With 'background'
 * (figures preparing themselves, not a reader's click), the core reads it in a
 * background task once the files have arrived.
 */
export function openShakespeare(priority: 'user' | 'background' = 'user'): Promise<Checkpoint> {
  opening ??= (async () => {
    const files = await Promise.all([
      loadChapterModule(),
      fetchOk(`${shakespeareDir}/config.json`).then((r) => r.text()),
      fetchOk(`${shakespeareDir}/model.safetensors`).then((r) => r.arrayBuffer()),
      fetchOk(`${shakespeareDir}/tokenizer.json`).then((r) => r.text()),
      fetchOk(`${shakespeareDir}/training.json`).then((r) => r.json() as Promise<TrainingRecord>),
    ]);
    const [module, config, weights, tokenizer, record] = priority === 'background' ? await inBackgroundTask(files) : files;
    const raw = new (module as unknown as { CheckpointSession: new () => RawCheckpoint }).CheckpointSession();
    const info = unwrap<CheckpointInfo>(loadCheckpoint(raw, { config, model: new Uint8Array(weights), tokenizer }));
    return {
      info,
      record,
      forward: (text) => unwrap(raw.forward(text, { capture: ['probabilities', 'v', 'head_outputs'] })),
      headPatterns: (text, seed, strings = 1) => unwrap(raw.headPatterns(text, seed, strings)),
      loss: (text) => unwrap(raw.loss(text)),
      generate: (text, count) => unwrap(raw.generate(text, count)),
    };
  })();
  opening.catch(() => (opening = null)); // a failed fetch may be retried
  return opening;
}
