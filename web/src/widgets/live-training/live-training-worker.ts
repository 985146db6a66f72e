// live-training's worker: the training run, off the page's thread. It steps in chunks of
// about `chunkMs` (the chunk's size adapts to the measured time per step), posts
// each chunk's losses, and between chunks lets the page's messages in, so Pause
// and Reset take effect within one chunk. Each step is shared with helper workers
// where the machine has the cores (live-training-team.ts), with the same bits as
// alone. About once a second it measures the model (held-out loss, the head
// patterns, the probe text's attention) and posts that too; the page only draws.
//
//   page -> worker   TrainerRequest  (live-training-protocol.ts)
//   worker -> page   TrainerMessage
/// <reference lib="webworker" />
import { loadTrainModule, startTraining, TrainError, type TrainingSession } from '../../lib/train-core';
import type { TrainerMessage, TrainerRequest } from './live-training-protocol';
import { Team } from './live-training-team';

declare const self: DedicatedWorkerGlobalScope;

const chunkMs = 40;        // a chunk of steps: Pause waits at most about this long
const measureEveryMs = 1000;
const speedWindowMs = 3000; // tokens per second over the last few seconds of running
// The induction test's string: 12 characters written twice, within the 8 to 16 the
// repeated training windows teach (core/train/trainer.hpp says why not 31).
const inductionLength = 12;

function post(message: TrainerMessage): void {
  self.postMessage(message);
}

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

class Run {
  stepsDone = 0;
  running = false;
  runningMs = 0;                 // wall-clock time spent running, pauses left out
  private chunk = 1;             // steps per chunk, adapted to chunkMs
  private lastMeasure = -Infinity;
  private samples: { at: number; tokens: number }[] = [];
  private tokens = 0;
  private probe: string;

  constructor(readonly id: number, readonly session: TrainingSession, private readonly steps: number,
              private readonly tokensPerStep: number, probe: string) {
    this.probe = probe;
  }

  setProbe(probe: string): void {
    this.probe = probe;
    post({ kind: 'attention', run: this.id, stepsDone: this.stepsDone, attention: this.attention() });
  }

  /** One chunk of steps; false once the schedule is done. */
  async chunkOfSteps(): Promise<boolean> {
    const n = Math.min(this.chunk, this.steps - this.stepsDone);
    const start = performance.now();
    const result = await team.steps(this.session, n);
    const now = performance.now();
    const ms = now - start;
    this.runningMs += ms;
    this.stepsDone = result.steps_done;
    this.tokens += n * this.tokensPerStep;
    this.samples.push({ at: this.runningMs, tokens: this.tokens });
    while (this.samples.length > 2 && this.runningMs - this.samples[1].at > speedWindowMs) this.samples.shift();
    const first = this.samples.length > 1 ? this.samples[0] : { at: 0, tokens: 0 };
    const tokensPerSecond = ((this.tokens - first.tokens) / Math.max(1e-9, this.runningMs - first.at)) * 1000;
    // The next chunk's size: as many steps as fit in chunkMs at this chunk's pace.
    this.chunk = Math.max(1, Math.min(256, Math.round((n * chunkMs) / Math.max(ms, 1e-3))));
    post({ kind: 'progress', run: this.id, stepsDone: this.stepsDone, losses: result.losses, tokensPerSecond, runningMs: this.runningMs });
    if (now - this.lastMeasure >= measureEveryMs) this.measure();
    return this.stepsDone < this.steps;
  }

  /** Held-out loss, head patterns and the probe's attention, as the model is now. */
  measure(): void {
    const start = performance.now();
    const patterns = (() => {
      try {
        return this.session.headPatterns(inductionLength);
      } catch (error) {
        return { error: errorText(error) };
      }
    })();
    post({
      kind: 'measured',
      run: this.id,
      stepsDone: this.stepsDone,
      runningMs: this.runningMs,
      heldoutLoss: this.session.heldoutLoss(),
      patterns,
      attention: this.attention(),
    });
    // Measuring is part of the run's wall-clock time, as the reader waits through it too.
    this.lastMeasure = performance.now();
    this.runningMs += this.lastMeasure - start;
  }

  private attention() {
    try {
      return this.session.attention(this.probe);
    } catch (error) {
      return { error: errorText(error) };
    }
  }
}

/** A failure no request expects: said to the page, and the queue goes on. */
const unexpected = (error: unknown) => post({ kind: 'error', run: run?.id ?? 0, message: `the trainer failed: ${errorText(error)}` });

let run: Run | null = null;
const team = new Team();
// Requests and chunks of steps, one at a time in the order they came.
let queue = Promise.resolve();

// Lets the page's messages in before the next chunk: a message posted to ourselves
// is queued behind them (setTimeout(0) would be clamped to 4 ms after a few rounds).
// The chunk then joins the queue of requests, so a request never lands mid-chunk
// (while a shared step waits for its helpers).
const channel = new MessageChannel();
channel.port1.onmessage = () => {
  scheduled = false;
  queue = queue.then(chunk).catch(unexpected);
};
const next = () => channel.port2.postMessage(null);
let scheduled = false;

async function chunk(): Promise<void> {
  const current = run;
  if (!current?.running) return;
  let more: boolean;
  try {
    more = await current.chunkOfSteps();
  } catch (error) {
    current.running = false;
    post({ kind: 'error', run: current.id, message: errorText(error) });
    return;
  }
  if (!more) {
    current.running = false;
    current.measure();
    post({ kind: 'finished', run: current.id, stepsDone: current.stepsDone });
    return;
  }
  schedule();
}

function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  next();
}

function drop(): void {
  team.drop();
  run?.session.delete();
  run = null;
}

async function handle(request: TrainerRequest): Promise<void> {
  if (request.kind === 'start') {
    drop();
    let session: TrainingSession;
    try {
      session = await startTraining(request.text, request.options);
    } catch (error) {
      post({ kind: 'error', run: request.run, message: error instanceof TrainError ? error.message : `the trainer failed: ${errorText(error)}` });
      return;
    }
    await team.start(session, request.text, request.options);
    const { batch, context, steps } = request.options;
    run = new Run(request.run, session, steps, batch * context, request.probe);
    post({ kind: 'started', run: run.id, info: session.info, workers: team.workers });
    run.measure(); // step 0: the untrained model, the start of every curve
    run.running = true;
    schedule();
    return;
  }
  if (!run || run.id !== request.run) return; // about a run that is gone
  switch (request.kind) {
    case 'pause':
      if (!run.running) return;
      run.running = false;
      post({ kind: 'paused', run: run.id, stepsDone: run.stepsDone });
      run.measure(); // the heatmaps and scores as the model is at the pause
      return;
    case 'resume':
      if (run.running) return;
      run.running = true;
      schedule();
      return;
    case 'reset':
      drop();
      return;
    case 'probe':
      run.setProbe(request.probe);
      return;
  }
}

// Requests are handled in order: a start (which may wait for the module) holds back
// the pause or reset sent after it.
self.addEventListener('message', (event: MessageEvent<TrainerRequest>) => {
  queue = queue.then(() => handle(event.data)).catch(unexpected);
});

loadTrainModule()
  .then(() => post({ kind: 'ready' }))
  .catch((error) => post({ kind: 'error', run: 0, message: `the training module could not be loaded: ${errorText(error)}` }));
