// The StreamingLLM widget's worker: the model and the core's stream_report run here, off
// the page's thread, so the page stays responsive while 2,000 tokens go through four
// policies. One request at a time, answered in order, each with its id; a run answers
// twice: the three cache policies first, then the report with the reference.
/// <reference lib="webworker" />
import { StreamSession } from '../../lib/stream-core';
import type { StreamMessage, StreamRequest } from './stream-protocol';

declare const self: DedicatedWorkerGlobalScope;

let session: StreamSession | null = null;
let queue = Promise.resolve();

const post = (message: StreamMessage) => self.postMessage(message);
const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

async function handle(request: StreamRequest): Promise<void> {
  try {
    if (request.kind === 'load') {
      session?.delete();
      session = null;
      session = await StreamSession.open(request.files);
      post({ kind: 'loaded', id: request.id, info: session.info });
    } else {
      if (!session) throw new Error('no model is loaded');
      post({ kind: 'policies', id: request.id, report: session.runPolicies(request.options) });
      post({ kind: 'report', id: request.id, report: session.addReference() });
    }
  } catch (error) {
    post({ kind: 'error', id: request.id, message: errorText(error) });
  }
}

self.onmessage = (event: MessageEvent<StreamRequest>) => {
  queue = queue.then(() => handle(event.data));
};
