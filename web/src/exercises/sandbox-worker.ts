// The sandbox: a dedicated worker that runs the learner's code, never the page's
// thread, with no network. One worker serves one run; the page terminates it
// afterwards, or as soon as a case outlives the timeout (sandbox.ts).
//
//   page -> worker   SandboxRequest {code, name, casesJson}
//   worker -> page   {kind: 'ready'}                 on start, before any learner code
//                    {kind: 'syntax', message, line, column}
//                    {kind: 'failed', error}          the code ran but defines no such function,
//                                                     or its top level threw
//                    {kind: 'case', index, output}    output = {value} | {error}, one per case
//                    {kind: 'done'}
/// <reference lib="webworker" />
import { errorLocation, errorText, missingFunctionText, runCases } from './runner.mjs';
import type { SandboxMessage, SandboxRequest } from './sandbox-protocol';

declare const self: DedicatedWorkerGlobalScope;

// The learner's code has no network. Each way a worker can reach one is replaced, before
// any learner code runs, by a function that throws saying so (and cannot be put back:
// the properties are neither writable nor configurable). import() is syntax, not a
// property: code that contains it is refused before it runs (run, below). The worker
// also runs under exercises.html's Content-Security-Policy (it starts from a blob: URL,
// sandbox.ts), whose connect-src refuses any other host to fetch and its kin.
// Worker is kept for locateSyntaxError, below, which starts one on the code's text.
const StartWorker = Worker;
const switchedOff = ['fetch', 'XMLHttpRequest', 'WebSocket', 'EventSource', 'importScripts', 'WebTransport', 'Worker', 'SharedWorker'];
for (const name of switchedOff) {
  const refuse = function () {
    throw new TypeError(`${name} is switched off: exercise code runs with no network`);
  };
  Object.defineProperty(self, name, { value: refuse, writable: false, configurable: false, enumerable: false });
}

// The name stack frames give the learner's code (a sourceURL comment).
const FILE = 'solution.js';

// new Function(body) compiles "function anonymous(\n) {\n" + body + "\n}", so the
// learner's line 1 is the engine's line 3. Measured once rather than assumed.
const LINE_OFFSET = (() => {
  try {
    new Function(`throw new Error('probe');\n//# sourceURL=${FILE}`)();
  } catch (error) {
    const where = errorLocation(error, FILE, 0);
    if (where) return where.line - 1;
  }
  return 2;
})();

function post(message: SandboxMessage): void {
  self.postMessage(message);
}

// A SyntaxError from new Function carries no line in Chromium. A classic worker
// started from the same code does: its 'error' event has lineno and colno. The
// code failed to parse, so nothing of it runs there; the worker is stopped either way.
function locateSyntaxError(code: string): Promise<{ line: number; column: number } | null> {
  return new Promise((resolve) => {
    let probe: Worker;
    let url = '';
    try {
      url = URL.createObjectURL(new Blob([code], { type: 'text/javascript' }));
      probe = new StartWorker(url);
    } catch {
      resolve(null);
      return;
    }
    const done = (where: { line: number; column: number } | null) => {
      clearTimeout(timer);
      probe.terminate();
      URL.revokeObjectURL(url);
      resolve(where);
    };
    const timer = setTimeout(() => done(null), 1000);
    probe.addEventListener('error', (event) => {
      event.preventDefault();
      done(event.lineno ? { line: event.lineno, column: event.colno } : null);
    });
  });
}

// import( with any spacing, wherever it stands: in a comment or a string too, which the
// message says how to fix.
const dynamicImport = /\bimport\s*\(/;

async function run({ code, name, casesJson }: SandboxRequest): Promise<void> {
  if (dynamicImport.test(code)) {
    post({ kind: 'failed', error: 'import() is switched off: exercise code runs with no network (remove every "import(" from the code, comments included)' });
    return;
  }
  let compiled: () => () => unknown;
  try {
    // The function's name is looked up after the code ran, so a const or a class
    // called `name` works as well as a function declaration.
    compiled = new Function(`${code}\n;return () => typeof ${name} === 'undefined' ? undefined : ${name};\n//# sourceURL=${FILE}`) as
      () => () => unknown;
  } catch (error) {
    const where = error instanceof SyntaxError ? await locateSyntaxError(code) : null;
    post({ kind: 'syntax', message: `${(error as Error).name}: ${(error as Error).message}`, line: where?.line ?? null, column: where?.column ?? null });
    return;
  }
  let lookUp: () => unknown;
  try {
    lookUp = compiled(); // runs the code's top level
  } catch (error) {
    post({ kind: 'failed', error: errorText(error, FILE, LINE_OFFSET) });
    return;
  }
  const fn = lookUp();
  if (typeof fn !== 'function') {
    post({ kind: 'failed', error: missingFunctionText(name, fn) });
    return;
  }
  runCases(fn as (...args: unknown[]) => unknown, casesJson, (index, output) => post({ kind: 'case', index, output }), {
    file: FILE,
    lineOffset: LINE_OFFSET,
  });
  post({ kind: 'done' });
}

self.addEventListener('message', (event: MessageEvent<SandboxRequest>) => void run(event.data), { once: true });
post({ kind: 'ready' });
