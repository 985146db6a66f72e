// One of the StreamingLLM widget's workers: a model and the core's stream module, off the
// page's thread, so the page stays responsive while 2,000 tokens go through four policies.
// The widget (stream-workers.ts) gives one worker the three cache policies and shares the
// reference's predictions out among all of them; each answers its requests in order, each
// with the request's id.
//
// The stream session's code (lib/stream-core.ts, the notebook module's glue with it) comes
// from the URL the first request names: the page's own file, so that the worker's script
// holds none of it and a reader downloads that code once, not once for the page and once
// for its workers.
/// <reference lib="webworker" />
import type { StreamSession } from '../../lib/stream-core';
import type { StreamMessage, StreamRequest } from './stream-protocol';

declare const self: DedicatedWorkerGlobalScope;

type StreamCore = typeof import('../../lib/stream-core');

let core: Promise<StreamCore> | null = null;
let session: StreamSession | null = null;
let queue = Promise.resolve();

const post = (message: StreamMessage) => self.postMessage(message);
const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

async function handle(request: StreamRequest): Promise<void> {
  try {
    if (request.kind === 'load') {
      session?.delete();
      session = null;
      core ??= import(/* @vite-ignore */ request.coreUrl) as Promise<StreamCore>;
      session = await (await core).StreamSession.open(request.files, request.wasm);
      post({ kind: 'loaded', id: request.id, info: session.info });
      return;
    }
    if (!session) throw new Error('no model is loaded');
    if (request.kind === 'check') post({ kind: 'checked', id: request.id, problem: session.check(request.options) });
    else if (request.kind === 'count') post({ kind: 'count', id: request.id, tokens: session.tokens(request.options) });
    else if (request.kind === 'run') post({ kind: 'policies', id: request.id, report: session.runPolicies(request.options) });
    else if (request.kind === 'losses') post({ kind: 'losses', id: request.id, ...session.referenceLosses(request.options, request.from, request.to) });
    else if (request.kind === 'continuation') post({ kind: 'continuation', id: request.id, ...session.referenceContinuation(request.options) });
    else post({ kind: 'report', id: request.id, report: session.attachReference(request.reference) });
  } catch (error) {
    post({ kind: 'error', id: request.id, message: errorText(error) });
  }
}

self.onmessage = (event: MessageEvent<StreamRequest>) => {
  queue = queue.then(() => handle(event.data));
};
