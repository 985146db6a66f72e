// live-training's steps shared between workers, as data-parallel training shares them between
// devices: the worker (live-training-worker.ts) and up to three helpers
// (live-training-helper.ts) each hold a replica of the run. Every step, each computes
// its shards of the same batch (shard s on worker s mod W; the worker is 0), the
// shards are exchanged, and every replica ends the step with all of them, added in
// shard order (core/train/train_steps.hpp). So a step is the one a single worker (or
// `attn train`) takes, bit for bit, on however many workers; the browser test compares.
//
// A batch of 16 windows has two shards of 8, so two workers share it. The helpers are
// started with the first run and kept for the next ones; without them (one core, or a
// browser that will not start them) the worker trains alone.
import type { Shard, StepResult, TrainingOptions, TrainingSession } from '../../lib/train-core';
import type { HelperMessage, HelperRequest } from './live-training-protocol';

const maxWorkers = 4;

/** One helper worker: requests in, the current run's answers out in order. */
class Helper {
  private readonly worker = new Worker(new URL('./live-training-helper.ts', import.meta.url), { type: 'module', name: 'live training helper' });
  private readonly arrived: HelperMessage[] = [];
  private readonly waiting: ((message: HelperMessage) => void)[] = [];

  constructor() {
    const deliver = (message: HelperMessage) => {
      const resolve = this.waiting.shift();
      if (resolve) resolve(message);
      else this.arrived.push(message);
    };
    this.worker.addEventListener('message', (event: MessageEvent<HelperMessage>) => deliver(event.data));
    this.worker.addEventListener('error', (event) => deliver({ kind: 'error', run: -1, message: event.message || 'the helper failed to load' }));
  }

  send(request: HelperRequest): void {
    this.worker.postMessage(request);
  }

  /** The next answer about `run` (those about earlier runs are dropped); throws the helper's error. */
  async answer<K extends HelperMessage['kind']>(kind: K, run: number): Promise<Extract<HelperMessage, { kind: K }>> {
    for (;;) {
      const message = this.arrived.shift() ?? (await new Promise<HelperMessage>((resolve) => this.waiting.push(resolve)));
      if (message.kind === 'error' && (message.run === run || message.run === -1)) throw new Error(`a training helper failed: ${message.message}`);
      if (message.run !== run) continue;
      if (message.kind !== kind) throw new Error(`a training helper answered ${message.kind}, not ${kind}`);
      return message as Extract<HelperMessage, { kind: K }>;
    }
  }

  terminate(): void {
    this.worker.terminate();
  }
}

export class Team {
  private helpers: Helper[] = [];
  private active = 0;  // helpers in the current run: W - 1
  private run = 0;     // numbers the runs, so that late answers from an earlier one are known

  /** The workers sharing each step of the current run. */
  get workers(): number {
    return this.active + 1;
  }

  /**
   * Starts replicas of `session`'s run (started with `text` and `options`) on as many
   * helpers as the batch has shards and the machine has cores, up to four workers in
   * all. A helper that fails to start leaves the worker training alone.
   */
  async start(session: TrainingSession, text: string, options: TrainingOptions): Promise<void> {
    this.drop();
    const workers = Math.max(1, Math.min(maxWorkers, session.info.shards, navigator.hardwareConcurrency || 1));
    const run = ++this.run;
    try {
      while (this.helpers.length < workers - 1) this.helpers.push(new Helper());
      const starting = this.helpers.slice(0, workers - 1);
      starting.forEach((helper, k) => helper.send({ kind: 'start', run, text, options, index: k + 1, workers }));
      for (const helper of starting) await helper.answer('started', run);
      this.active = workers - 1;
    } catch {
      this.stopHelpers();
    }
  }

  /**
   * n steps of the run, shared between the workers. A helper's failure ends the run
   * (the error is thrown) and stops the helpers; the next run starts new ones.
   */
  async steps(session: TrainingSession, n: number): Promise<StepResult> {
    if (this.active === 0) return session.step(n);
    const result: StepResult = { steps_done: 0, losses: [], norms: [] };
    try {
      for (let i = 0; i < n; i++) {
        const { steps_done, loss, norm } = await this.step(session);
        result.steps_done = steps_done;
        result.losses.push(loss);
        result.norms.push(norm);
      }
    } catch (error) {
      this.stopHelpers();
      throw error;
    }
    return result;
  }

  /** Drops the helpers' replicas (the helpers themselves are kept for the next run). */
  drop(): void {
    for (const helper of this.helpers.slice(0, this.active)) helper.send({ kind: 'drop' });
    this.active = 0;
  }

  /** Ends every helper, after a failure: the next run starts new ones. */
  private stopHelpers(): void {
    for (const helper of this.helpers) helper.terminate();
    this.helpers = [];
    this.active = 0;
  }

  private async step(session: TrainingSession): Promise<{ steps_done: number; loss: number; norm: number }> {
    const run = this.run, helpers = this.helpers.slice(0, this.active), W = this.workers;
    // The helpers began this step when they ended the last one; the worker begins it
    // here, computes its shards and sends them on, then takes theirs as they come,
    // passing each helper's on to the others.
    const count = session.beginStep();
    const mine: Shard[] = [];
    for (let s = 0; s < count; s += W) mine.push(session.computeShard(s));
    for (const helper of helpers) helper.send({ kind: 'shards', run, shards: mine });
    for (const [k, helper] of helpers.entries()) {
      const { shards } = await helper.answer('shards', run);
      for (const shard of shards) session.receiveShard(shard);
      helpers.forEach((other, j) => j !== k && other.send({ kind: 'shards', run, shards }));
    }
    return session.endStep();
  }
}
