// The training module (wasm/bindings_train.cpp: core/train run by the core), typed.
// A module of its own, imported only by live-training's worker (widgets/live-training/live-training-worker.ts):
// neither its JavaScript nor its wasm is part of what the chapter loads first, and
// no training step ever runs on the page's thread.
import createAnatomyTrain from '@wasm/attention_train.js';
import wasmUrl from '@wasm/attention_train.wasm?url';
import type { HeadPatterns } from './trained-core';
import { moduleLoader } from './wasm-compile';
import { unwrapResult } from './wasm-result';

export type { HeadPatterns, PatternScores } from './trained-core';

/** start()'s options (TrainingSettings in core/train/trainer.hpp). */
export interface TrainingOptions {
  seed: number;
  steps: number;            // the schedule's length: warm-up, then cosine decay to 10% at `steps`
  context: number;          // T: BOS + T - 1 characters per window
  batch: number;            // B windows per step
  lr: number;               // AdamW's peak learning rate
  warmup: number;           // warm-up steps
  repeat_fraction: number;  // the share of each batch that is a random string written over and over
  hidden_size: 32 | 64;
}

export interface TrainingInfo {
  vocab_size: number;       // the text's distinct characters + BOS
  characters: number;
  train_characters: number;
  heldout_characters: number;
  parameters: number;
  shards: number;           // a step's batch is cut into this many shards of 8 windows
}

export interface StepResult {
  steps_done: number;
  losses: number[];         // one per step: the batch's mean cross-entropy, nats per character
  norms: number[];          // the gradient's norm before clipping
}

export interface Attention {
  labels: string[];                   // [T] BOS and the characters
  probs: number[][][][];              // [L][Hq][T][T]
}

/** One shard of a step's batch as one worker computed it (Trainer::shard in core/train/trainer.hpp). */
export interface Shard {
  s: number;                // which shard: windows 8s .. 8s + 7 of the batch
  loss: number;             // its mean cross-entropy
  gradients: Float32Array;  // every weight's gradient, in the core's order (weights.hpp)
}

export class TrainError extends Error {}

/** One training run; free it with delete(). Every method throws TrainError with the core's message. */
export interface TrainingSession {
  info: TrainingInfo;
  step(n: number): StepResult;
  heldoutLoss(): number;
  /** Every head's scores; the induction string `R` characters long (0: the longest that fits). */
  headPatterns(R: number): HeadPatterns;
  attention(text: string): Attention;
  /**
   * A step in parts, for workers that share it (live-training-worker.ts): each holds
   * a session started alike, begins the step (the same batch everywhere), computes
   * its shards, receives the others', and ends it with all of them.
   */
  beginStep(): number;                 // the batch's number of shards
  computeShard(s: number): Shard;
  receiveShard(shard: Shard): void;
  endStep(): { steps_done: number; loss: number; norm: number };
  delete(): void;
}

/** The module's TrainingSession as wasm/bindings_train.cpp binds it; start's options are TrainingOptions as JSON text. */
interface RawSession {
  start(text: string, options: string): string;
  step(n: number): string;
  heldoutLoss(): string;
  headPatterns(R: number): string;
  attention(text: string): string;
  beginStep(): string;
  computeShard(s: number): string;
  shardGradients(s: number): Float32Array | string;
  receiveShard(s: number, loss: number, gradients: Float32Array): string;
  endStep(): string;
  delete(): void;
}

type RawModule = { TrainingSession: new () => RawSession };

const unwrap = <T>(out: string): T => unwrapResult<T>(out, (message) => new TrainError(message));

/** Loads the module once (fetch and compile, streamed); later calls share it. */
export const loadTrainModule = moduleLoader(createAnatomyTrain, wasmUrl, (raw) => raw as RawModule);

/** A run from fresh weights on `text`; throws TrainError naming what is wrong with the text or the options. */
export async function startTraining(text: string, options: TrainingOptions): Promise<TrainingSession> {
  const module = await loadTrainModule();
  // A session of its own per run: one whose start() failed is dropped whole.
  const raw = new module.TrainingSession();
  let info: TrainingInfo;
  try {
    info = unwrap<TrainingInfo>(raw.start(text, JSON.stringify(options)));
  } catch (error) {
    raw.delete();
    throw error;
  }
  return {
    info,
    step: (n) => unwrap(raw.step(n)),
    heldoutLoss: () => unwrap<{ heldout_loss: number }>(raw.heldoutLoss()).heldout_loss,
    headPatterns: (R) => unwrap(raw.headPatterns(R)),
    attention: (text) => unwrap(raw.attention(text)),
    beginStep: () => unwrap<{ shards: number }>(raw.beginStep()).shards,
    computeShard: (s) => {
      const { loss } = unwrap<{ loss: number }>(raw.computeShard(s));
      const gradients = raw.shardGradients(s);
      if (typeof gradients === 'string') return unwrap(gradients);
      return { s, loss, gradients };
    },
    receiveShard: (shard) => void unwrap(raw.receiveShard(shard.s, shard.loss, shard.gradients)),
    endStep: () => unwrap(raw.endStep()),
    delete: () => raw.delete(),
  };
}
