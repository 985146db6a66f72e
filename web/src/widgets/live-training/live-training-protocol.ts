// The messages between live-training's panel (live-training-panel.ts, the page's thread) and
// its worker (live-training-worker.ts, where every training step runs).
//
// Every run has a number chosen by the page; the worker tags what it sends with
// the run it belongs to, so a message still in flight when the reader pressed
// Reset (or started another run) is recognised as stale and dropped.
import type { HeadPatterns, Shard, TrainingInfo, TrainingOptions } from '../../lib/train-core';

export type TrainerRequest =
  /** A new run from fresh weights: start(text, options), then steps until paused or done. */
  | { kind: 'start'; run: number; text: string; options: TrainingOptions; probe: string }
  | { kind: 'pause'; run: number }
  | { kind: 'resume'; run: number }
  /** Drops the run and its weights. */
  | { kind: 'reset'; run: number }
  /** The text whose attention the heatmaps show; answered at once when a run exists. */
  | { kind: 'probe'; run: number; probe: string };

/** The probe text's attention: labels [T] and probabilities [L][Hq][T][T], for BOS + the probe. */
export interface ProbeAttention {
  labels: string[];
  probs: number[][][][];
}

export type TrainerMessage =
  /** The module is loaded (sent once, before anything else). */
  | { kind: 'ready' }
  /** `workers`: how many workers share each step (live-training-team.ts). */
  | { kind: 'started'; run: number; info: TrainingInfo; workers: number }
  /**
   * After each chunk of steps: their losses, the totals so far, and the speed over
   * the last seconds of running (tokens = steps x batch x context).
   */
  | {
      kind: 'progress';
      run: number;
      stepsDone: number;
      losses: number[];
      tokensPerSecond: number;
      runningMs: number;   // wall-clock time spent running (pauses left out)
    }
  /** About once a second while running, and whenever the run pauses or ends. */
  | {
      kind: 'measured';
      run: number;
      stepsDone: number;
      runningMs: number;
      heldoutLoss: number;
      patterns: HeadPatterns | { error: string };
      attention: ProbeAttention | { error: string };
    }
  | { kind: 'attention'; run: number; stepsDone: number; attention: ProbeAttention | { error: string } }
  | { kind: 'paused'; run: number; stepsDone: number }
  /** The schedule's last step is done. */
  | { kind: 'finished'; run: number; stepsDone: number }
  /** The core refused the text or the settings (start), or failed later; `message` is its own. */
  | { kind: 'error'; run: number; message: string };

// Between the worker and its helpers (live-training-team.ts, live-training-helper.ts).
// Each helper holds a replica of the run; shard s of every batch is computed by
// worker s mod W (the worker itself is 0, helper k is k). A helper runs a step
// ahead: as soon as it has every shard of a step it ends it, begins the next and
// sends its shards of that one. Answers carry the run they belong to, so one still
// on its way from a run that is gone is recognised and dropped.

export type HelperRequest =
  /** A replica of the run the worker starts: the same text and options, so the same batches. */
  | { kind: 'start'; run: number; text: string; options: TrainingOptions; index: number; workers: number }
  /** Shards of the helper's current step computed elsewhere; with all of them it ends the step. */
  | { kind: 'shards'; run: number; shards: Shard[] }
  /** Drops the replica. */
  | { kind: 'drop' };

export type HelperMessage =
  /** Started: its shards of the first step follow. */
  | { kind: 'started'; run: number }
  | { kind: 'shards'; run: number; shards: Shard[] }
  | { kind: 'error'; run: number; message: string };
