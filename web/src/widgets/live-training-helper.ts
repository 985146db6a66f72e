// A helper of W10's worker: a replica of the training run that computes its share
// of every step's shards (shard s when s mod W is its index) and ends each step
// with every shard, as the worker does, so its weights stay the worker's, bit for
// bit. The worker (live-training-team.ts) starts it and talks to it; it never
// measures or draws anything.
//
//   worker -> helper   HelperRequest  (live-training-protocol.ts)
//   helper -> worker   HelperMessage
/// <reference lib="webworker" />
import { startTraining, type Shard, type TrainingSession } from '../lib/train-core';
import type { HelperMessage, HelperRequest } from './live-training-protocol';

declare const self: DedicatedWorkerGlobalScope;

let session: TrainingSession | null = null;
let index = 1, workers = 2;

const post = (message: HelperMessage, transfer: Transferable[] = []) => self.postMessage(message, transfer);

function drop(): void {
  session?.delete();
  session = null;
}

async function handle(request: HelperRequest): Promise<void> {
  switch (request.kind) {
    case 'start':
      drop();
      ({ index, workers } = request);
      session = await startTraining(request.text, request.options);
      post({ kind: 'started' });
      return;
    case 'step': {
      if (!session) throw new Error('the helper has no run to step');
      if (request.finish) {
        for (const shard of request.finish) session.receiveShard(shard);
        session.endStep();
      }
      const count = session.beginStep();
      const shards: Shard[] = [];
      for (let s = index; s < count; s += workers) shards.push(session.computeShard(s));
      post({ kind: 'shards', shards }, shards.map((shard) => shard.gradients.buffer));
      return;
    }
    case 'drop':
      drop();
      return;
  }
}

// In order, one at a time: a step waits for the start before it.
let queue = Promise.resolve();
self.addEventListener('message', (event: MessageEvent<HelperRequest>) => {
  queue = queue
    .then(() => handle(event.data))
    .catch((error) => post({ kind: 'error', message: error instanceof Error ? error.message : String(error) }));
});
