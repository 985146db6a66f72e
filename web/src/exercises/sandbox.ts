// The page's side of the sandbox: hands the learner's code to a fresh worker,
// collects one output per case, and terminates the worker when a case runs past
// the timeout. The page's thread never runs learner code, so it stays responsive
// whatever the code does.
//
// A worker takes a few tens of milliseconds to start, so one is started ahead of
// time and kept waiting; each run uses it once and a new one is started behind it.
import type { CaseOutput } from './runner.mjs';
import type { SandboxMessage, SandboxRequest } from './sandbox-protocol';
import sandboxWorkerUrl from './sandbox-worker.ts?worker&url';

export interface SyntaxProblem {
  message: string;
  line: number | null;
  column: number | null;
}

export interface RunResult {
  /** One per case, ready for the judge (judgeOutputs). */
  outputs: CaseOutput[];
  syntax: SyntaxProblem | null;
  /** The index of the case that ran past the timeout, or null. */
  timedOutAt: number | null;
  /** True when the run was stopped through the signal; the outputs are then incomplete. */
  stopped: boolean;
  /** From handing over the code to the last output. */
  elapsedMs: number;
}

export interface RunOptions extends SandboxRequest {
  caseCount: number;
  timeoutMs: number;
  /** Called as each case finishes, for a live count. */
  onCase?: (index: number, output: CaseOutput) => void;
  /** Aborting it terminates the worker at once. */
  signal?: AbortSignal;
}

// The worker starts from a blob: URL that imports sandbox-worker.ts: a worker from a
// blob: URL runs under the page's Content-Security-Policy (exercises.html), whose
// connect-src lets fetch and its kin reach this site alone.
let workerSource: string | null = null;

function startWorker(): { worker: Worker; ready: Promise<void> } {
  workerSource ??= URL.createObjectURL(new Blob([`import ${JSON.stringify(new URL(sandboxWorkerUrl, document.baseURI).href)};\n`],
    { type: 'text/javascript' }));
  const worker = new Worker(workerSource, { type: 'module', name: 'exercise sandbox' });
  const ready = new Promise<void>((resolve, reject) => {
    const onMessage = (event: MessageEvent<SandboxMessage>) => {
      if (event.data.kind !== 'ready') return;
      worker.removeEventListener('message', onMessage);
      resolve();
    };
    worker.addEventListener('message', onMessage);
    worker.addEventListener('error', (event) => reject(new Error(event.message || 'the sandbox worker failed to start')), { once: true });
  });
  ready.catch(() => {}); // reported when a run waits on it
  return { worker, ready };
}

let spare: ReturnType<typeof startWorker> | null = null;

/** Starts the waiting worker now (e.g. when the page opens), so the first Run is fast. */
export function warmSandbox(): void {
  spare ??= startWorker();
}

function takeWorker(): ReturnType<typeof startWorker> {
  const taken = spare ?? startWorker();
  spare = null;
  setTimeout(warmSandbox, 0);
  return taken;
}

export function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(1))} s`;
}

/** Runs the code on every case. Never rejects: whatever goes wrong becomes an output. */
export async function runInSandbox(options: RunOptions): Promise<RunResult> {
  const { worker, ready } = takeWorker();
  const outputs: (CaseOutput | null)[] = new Array(options.caseCount).fill(null);
  const started = performance.now();
  const result = (syntax: SyntaxProblem | null, timedOutAt: number | null, fill: (i: number) => string, stopped = false): RunResult => ({
    outputs: outputs.map((o, i) => o ?? { error: fill(i) }),
    syntax,
    timedOutAt,
    stopped,
    elapsedMs: performance.now() - started,
  });

  try {
    await ready;
  } catch (error) {
    worker.terminate();
    return result(null, null, () => `the sandbox could not start: ${(error as Error).message}`);
  }

  return new Promise<RunResult>((resolve) => {
    let timer = 0;
    let settled = false;
    const finish = (value: RunResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      worker.terminate();
      options.signal?.removeEventListener('abort', onAbort);
      resolve(value);
    };
    const onAbort = () => finish(result(null, null, () => 'stopped', true));
    if (options.signal?.aborted) return onAbort();
    options.signal?.addEventListener('abort', onAbort);
    // Each case gets the whole timeout; the clock restarts when a case reports.
    const arm = () => {
      clearTimeout(timer);
      timer = window.setTimeout(() => {
        const running = outputs.indexOf(null);
        finish(result(null, running, (i) =>
          i === running ? `timed out after ${seconds(options.timeoutMs)}` : 'not run: an earlier case timed out'));
      }, options.timeoutMs);
    };
    worker.addEventListener('message', (event: MessageEvent<SandboxMessage>) => {
      const message = event.data;
      if (message.kind === 'case') {
        outputs[message.index] = message.output;
        options.onCase?.(message.index, message.output);
        arm();
      } else if (message.kind === 'syntax') {
        const where = message.line ? ` (line ${message.line}${message.column ? `, column ${message.column}` : ''})` : '';
        finish(result(message, null, () => message.message + where));
      } else if (message.kind === 'failed') {
        finish(result(null, null, () => message.error));
      } else if (message.kind === 'done') {
        finish(result(null, null, () => 'no result'));
      }
    });
    // Errors the code raises outside the call (a callback it scheduled, say).
    worker.addEventListener('error', (event) => {
      event.preventDefault();
      finish(result(null, null, () => `the sandbox stopped: ${event.message}`));
    });
    arm();
    const request: SandboxRequest = { code: options.code, name: options.name, casesJson: options.casesJson };
    worker.postMessage(request);
  });
}
