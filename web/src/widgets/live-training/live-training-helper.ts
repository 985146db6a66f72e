// A helper of live-training's worker: a replica of the training run that computes its share
// of every step's shards (shard s when s mod W is its index) and ends each step
// with every shard, as the worker does, so its weights stay the worker's, bit for
// bit. It runs a step ahead of the worker: once a step is ended it begins the next
// and sends its shards of it, so they are ready when the worker gets there. The
// worker (live-training-team.ts) starts it and talks to it; it never measures or
// draws anything.
//
//   worker -> helper   HelperRequest  (live-training-protocol.ts)
//   helper -> worker   HelperMessage
/// <reference lib="webworker" />
import { startTraining, type Shard, type TrainingSession } from '../../lib/train-core';
import type { HelperMessage, HelperRequest } from './live-training-protocol';

declare const self: DedicatedWorkerGlobalScope;

let session: TrainingSession | null = null;
let run = 0, index = 1, workers = 2;
let missing = 0; // shards of the current step still to come from the others

const post = (message: HelperMessage, transfer: Transferable[] = []) => self.postMessage(message, transfer);

function drop(): void {
  session?.delete();
  session = null;
}

/** Begins the next step and sends this helper's shards of it. */
function beginStep(current: TrainingSession): void {
  const count = current.beginStep();
  const shards: Shard[] = [];
  for (let s = index; s < count; s += workers) shards.push(current.computeShard(s));
  missing = count - shards.length;
  post({ kind: 'shards', run, shards }, shards.map((shard) => shard.gradients.buffer));
}

async function handle(request: HelperRequest): Promise<void> {
  switch (request.kind) {
    case 'start':
      drop();
      ({ run, index, workers } = request);
      session = await startTraining(request.text, request.options);
      post({ kind: 'started', run });
      beginStep(session);
      return;
    case 'shards':
      if (!session || request.run !== run) return; // for a run that is gone
      for (const shard of request.shards) session.receiveShard(shard);
      missing -= request.shards.length;
      if (missing > 0) return;
      session.endStep();
      beginStep(session);
      return;
    case 'drop':
      drop();
      return;
  }
}

// In order, one at a time: shards wait for the start before them.
let queue = Promise.resolve();
self.addEventListener('message', (event: MessageEvent<HelperRequest>) => {
  queue = queue
    .then(() => handle(event.data))
    .catch((error) => {
      drop();
      post({ kind: 'error', run, message: error instanceof Error ? error.message : String(error) });
    });
});
