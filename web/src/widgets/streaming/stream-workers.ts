// The StreamingLLM widget's workers (stream-worker.ts), each holding the same model. A run
// gives the first worker the three cache policies, each a sequential decode, and shares
// the reference out: every prediction of the reference is a pass of its own over the last
// W tokens (core/stream/stream_losses.hpp, recomputed_losses), so its predictions go out
// in parts, the other workers taking them from the start and the first joining them once
// its caches are done. The parts, joined in order, are the reference `attn stream`
// computes in one piece, bit for bit (the wasm test compares); the first worker's core
// adds it to its report. On one core there is one worker, which does it all.
import { compileStreamWasm, streamCoreUrl, type StreamModelFiles, type StreamModelInfo, type StreamOptionProblem, type StreamOptions, type StreamReport } from '../../lib/stream-core';
import type { StreamMessage, StreamRequest } from './stream-protocol';

const maxWorkers = 4;
// The reference's predictions go out in parts of at most this many (at W = 64, some 50 ms
// each): the messages cost nothing beside them.
const partPredictions = 100;

/** A request as the widget writes it; ask() numbers it. */
type RequestWithoutId = StreamRequest extends infer R ? (R extends unknown ? Omit<R, 'id'> : never) : never;
type Answer<K extends StreamMessage['kind']> = Extract<StreamMessage, { kind: K }>;

export class StreamWorkerError extends Error {}

/** One worker: requests in, each answer matched to its request. */
class StreamWorker {
  private readonly worker: Worker;
  private nextId = 0;
  private readonly waiting = new Map<number, (message: StreamMessage) => void>();
  broken = false;  // it failed to start or died: a new one takes its place at the next load

  constructor(name: string) {
    this.worker = new Worker(new URL('./stream-worker.ts', import.meta.url), { type: 'module', name });
    this.worker.onmessage = (event: MessageEvent<StreamMessage>) => {
      const resolve = this.waiting.get(event.data.id);
      this.waiting.delete(event.data.id);
      resolve?.(event.data);
    };
    // A worker that fails to start or dies (its module could not load, memory ran out)
    // answers every question still open with an error, so the figure says so instead of waiting.
    this.worker.onerror = (event) => {
      event.preventDefault();
      this.failAll(`a worker stopped (${event.message || 'an error'}); press Run to try again`);
    };
    this.worker.onmessageerror = () => this.failAll('a message from a worker could not be read');
  }

  /** The answer to `request`, of kind `kind`; throws the worker's error. */
  async ask<K extends StreamMessage['kind']>(request: RequestWithoutId, kind: K, transfer: Transferable[] = []): Promise<Answer<K>> {
    const answer = await new Promise<StreamMessage>((resolve) => {
      const id = this.nextId++;
      this.waiting.set(id, resolve);
      this.worker.postMessage({ ...request, id } as StreamRequest, transfer);
    });
    if (answer.kind === 'error') throw new StreamWorkerError(answer.message);
    if (answer.kind !== kind) throw new StreamWorkerError(`a worker answered ${answer.kind}, not ${kind}`);
    return answer as Answer<K>;
  }

  terminate(): void {
    this.worker.terminate();
    this.failAll('the worker was stopped');
  }

  private failAll(message: string): void {
    this.broken = true;
    for (const [id, resolve] of this.waiting) resolve({ kind: 'error', id, message });
    this.waiting.clear();
  }
}

const workerName = (k: number) => (k === 0 ? 'streaming' : `streaming ${k + 1}`);

/** How far a run's reference has got: predictions computed of those it makes. */
export type StreamProgress = (done: number, total: number) => void;

/** The error a run ends with when stop() ended it. */
export class StreamStopped extends Error {}

export interface StreamRunResult {
  report: StreamReport;  // all four policies
  ms: number;            // from the request to the report, as the reader waits
  workers: number;       // how many shared the reference
}

export class StreamWorkers {
  private readonly workers: StreamWorker[];
  private stopped = false;

  constructor(count = Math.max(1, Math.min(maxWorkers, navigator.hardwareConcurrency || 1))) {
    this.workers = Array.from({ length: count }, (_, k) => new StreamWorker(workerName(k)));
  }

  /** Whether a worker failed to start or died: the model must be loaded again. */
  get broken(): boolean {
    return this.workers.some((worker) => worker.broken);
  }

  /**
   * Loads the model into every worker (a copy each; the last takes the bytes themselves),
   * a new worker in place of a broken one.
   */
  async load(files: StreamModelFiles): Promise<StreamModelInfo> {
    this.workers.forEach((worker, k) => {
      if (worker.broken) {
        worker.terminate();
        this.workers[k] = new StreamWorker(workerName(k));
      }
    });
    const buffers = files.format === 'checkpoint' ? [files.safetensors.buffer] : [files.model.buffer, files.tokenizer.buffer];
    const last = this.workers.length - 1;
    // One compile for all: the workers share its code, so what one warms the others run.
    const wasm = await compileStreamWasm(files.format).catch(() => undefined);  // without it each worker compiles its own
    const answers = await Promise.all(this.workers.map((worker, k) =>
      worker.ask({ kind: 'load', coreUrl: streamCoreUrl, files, wasm }, 'loaded', k === last ? buffers : [])));
    return answers[0].info;
  }

  /** null when a run takes these options, else the option the core refuses and its words. */
  async check(options: StreamOptions): Promise<StreamOptionProblem | null> {
    return (await this.workers[0].ask({ kind: 'check', options }, 'checked')).problem;
  }

  /**
   * Ends the run under way at once: every worker is stopped (the run throws StreamStopped)
   * and the next load starts new ones.
   */
  stop(): void {
    this.stopped = true;
    for (const worker of this.workers) worker.terminate();
  }

  /**
   * The four policies on `options`: `policies` gets the three caches' report as soon as
   * the first worker has it, `progress` each part of the reference as it comes, and the
   * result holds the reference as well. Throws a worker's error, or StreamStopped.
   */
  async run(options: StreamOptions, policies: (report: StreamReport) => void, progress: StreamProgress = () => {}): Promise<StreamRunResult> {
    this.stopped = false;
    try {
      return await this.runAll(options, policies, progress);
    } catch (error) {
      throw this.stopped ? new StreamStopped('stopped') : error;
    }
  }

  private async runAll(options: StreamOptions, policies: (report: StreamReport) => void, progress: StreamProgress): Promise<StreamRunResult> {
    const started = performance.now();
    const [first, ...others] = this.workers;
    // The caches start at once; the parts wait for the count of predictions, which a worker
    // with no caches to run gives (its text is then read for the parts it takes).
    const counted = (others[0] ?? first).ask({ kind: 'count', options }, 'count');
    const losses = new Map<number, number[]>();  // by first prediction
    let continuation: number[] = [], referenceMs = 0, failed = false, next = 0, done = 0;

    // Each worker takes the next part until none is left, the parts shrinking as the end
    // nears (a quarter of what is left per worker, at most partPredictions) so that the
    // workers end together; the continuation (a sequential decode of its own) goes first,
    // to a worker that has no caches to run.
    const take = async (worker: StreamWorker, withContinuation: boolean) => {
      const predictions = (await counted).tokens - 1;
      if (withContinuation) {
        const answer = await worker.ask({ kind: 'continuation', options }, 'continuation');
        continuation = answer.ids;
        referenceMs += answer.ms;
      }
      while (next < predictions && !failed) {
        const from = next, left = predictions - from;
        const to = from + Math.min(left, partPredictions, Math.max(8, Math.ceil(left / (4 * this.workers.length))));
        next = to;
        const answer = await worker.ask({ kind: 'losses', options, from, to }, 'losses');
        losses.set(from, answer.losses);
        referenceMs += answer.ms;
        done += to - from;
        progress(done, predictions);
      }
    };
    const caches = first.ask({ kind: 'run', options }, 'policies').then((answer) => {
      policies(answer.report);
      return take(first, others.length === 0);
    });
    try {
      await Promise.all([caches, ...others.map((worker, k) => take(worker, k === 0))]);
    } catch (error) {
      failed = true;
      throw error;
    }
    const joined = [...losses].sort(([a], [b]) => a - b).flatMap(([, part]) => part);
    const { report } = await first.ask({ kind: 'attach', reference: { losses: joined, continuation, ms: referenceMs } }, 'report');
    return { report, ms: performance.now() - started, workers: this.workers.length };
  }
}
