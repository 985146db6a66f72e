#!/usr/bin/env node
// Judges a solution to one of the page's exercises from the command line, with the
// same wasm judge the page uses (core/judge, built by the wasm preset).
//
//   node tools/judge.mjs EXERCISE SOLUTION.js [--json] [--timeout SECONDS]
//   node tools/judge.mjs --list
//
// SOLUTION.js is a plain script that defines the function, as on the page:
//   function softmax(x) { ... }
// It runs in a worker thread, never in this one: each case has --timeout seconds
// (3 by default) before the thread is stopped and the case reported as timed out.
// Prints a readable report, or with --json the judge's own report. Exit status:
// 0 when every test passes, 1 when any fails, 2 for a usage error, an unknown
// exercise, an unreadable file, a missing wasm build, or a thrown value that cannot
// be turned into text (one line on stderr). The solution runs in a worker thread of
// this process, as you, with your files and network: no sandbox, unlike the page.
// The wasm comes from build/wasm/wasm, or from $ANATOMY_WASM_DIR.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

import { errorText, isUnprintable, missingFunctionText, runCases } from '../web/src/exercises/runner.mjs';

const usage = 'usage: node tools/judge.mjs EXERCISE SOLUTION.js [--json] [--timeout SECONDS]  (or --list)';

// ---------------------------------------------------------------- the worker thread

// Compiles the learner's file as a classic script (so `function softmax` becomes a
// global, as in a browser), then runs the cases. A syntax error is reported with
// its line and column, which Node prints at the top of the error's stack:
// "/path/softmax.js:3\n  return x +* y;\n            ^\n\nSyntaxError: ...".
function workerMain({ code, file, name, casesJson }) {
  parentPort.postMessage({ kind: 'started' });
  let script;
  try {
    script = new vm.Script(code, { filename: file });
  } catch (error) {
    const [first = '', , caret = ''] = String(error.stack).split('\n');
    const line = first.startsWith(file + ':') ? Number(first.slice(file.length + 1)) : null;
    const column = line !== null && caret.includes('^') ? caret.indexOf('^') + 1 : null;
    parentPort.postMessage({ kind: 'syntax', message: `${error.name}: ${error.message}`, line, column });
    return;
  }
  try {
    script.runInThisContext();
  } catch (error) {
    // Thrown while the file's top level ran: every case reports it.
    parentPort.postMessage({ kind: 'failed', error: errorText(error, file) });
    return;
  }
  const fn = vm.runInThisContext(`typeof ${name} === 'undefined' ? undefined : ${name}`);
  if (typeof fn !== 'function') {
    parentPort.postMessage({ kind: 'failed', error: missingFunctionText(name, fn) });
    return;
  }
  runCases(fn, casesJson, (index, output) => parentPort.postMessage({ kind: 'case', index, output }), { file });
  parentPort.postMessage({ kind: 'done' });
}

// ---------------------------------------------------------------- the main thread

export class UsageError extends Error {}

function parseArgs(argv) {
  const options = { json: false, list: false, timeoutSeconds: 3, positional: [] };
  for (let i = 0; i < argv.length; ++i) {
    const arg = argv[i];
    if (arg === '--json') options.json = true;
    else if (arg === '--list') options.list = true;
    else if (arg === '--help' || arg === '-h') throw new UsageError(usage);
    else if (arg === '--timeout' || arg.startsWith('--timeout=')) {
      const text = arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : argv[++i];
      const seconds = Number(text);
      if (text === undefined || text === '' || !Number.isFinite(seconds) || seconds <= 0 || seconds > 600) {
        throw new UsageError(`--timeout takes a number of seconds between 0 and 600, got ${text ?? 'nothing'}`);
      }
      options.timeoutSeconds = seconds;
    } else if (arg.startsWith('-') && arg !== '-') throw new UsageError(`unknown option ${arg}; ${usage}`);
    else options.positional.push(arg);
  }
  if (options.list) {
    if (options.positional.length) throw new UsageError(`--list takes no other arguments; ${usage}`);
  } else if (options.positional.length !== 2) {
    throw new UsageError(options.positional.length < 2 ? usage : `too many arguments; ${usage}`);
  }
  return options;
}

// A core call that answers {error} on bad input.
function callCore(core, fn, ...args) {
  const result = JSON.parse(core[fn](...args));
  if (result && !Array.isArray(result) && typeof result === 'object' && 'error' in result) throw new UsageError(result.error);
  return result;
}

// Runs the solution on every case in a worker thread; resolves to one output per case.
function runSolution({ code, file, name, casesJson, count, timeoutSeconds }) {
  const outputs = new Array(count).fill(null);
  return new Promise((resolve) => {
    const worker = new Worker(new URL(import.meta.url), {
      workerData: { code, file, name, casesJson },
      // The learner's console.log goes to our stderr, keeping stdout for the report.
      stdout: true,
      stderr: false,
    });
    worker.stdout.on('data', (chunk) => process.stderr.write(chunk));
    let timer;
    let settled = false;
    const finish = (fill) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void worker.terminate();
      for (let i = 0; i < count; ++i) outputs[i] ??= { error: fill(i) };
      resolve(outputs);
    };
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        const running = outputs.indexOf(null);
        finish((i) => (i === running ? `timed out after ${timeoutSeconds} s` : 'not run: an earlier case timed out'));
      }, timeoutSeconds * 1000);
    };
    // The clock starts when the thread does: starting a thread on a busy machine
    // can take a while, and that is not the solution's time.
    timer = setTimeout(() => finish(() => 'the solution\'s thread did not start within 60 s'), 60_000);
    worker.on('message', (message) => {
      if (message.kind === 'started') {
        arm();
      } else if (message.kind === 'case') {
        outputs[message.index] = message.output;
        arm();
      } else if (message.kind === 'syntax') {
        const where = message.line ? ` (line ${message.line}${message.column ? `, column ${message.column}` : ''})` : '';
        finish(() => message.message + where);
      } else if (message.kind === 'failed') {
        finish(() => message.error);
      } else if (message.kind === 'done') {
        finish(() => 'no result');
      }
    });
    worker.on('error', (error) => finish(() => `the solution's thread failed: ${error.message}`));
    worker.on('exit', () => finish(() => 'the solution\'s thread stopped before this case'));
  });
}

// ---- The readable report ----

const fmt = (x) => {
  if (typeof x === 'string') return x; // "NaN", "Infinity", "-Infinity"
  if (x === 0) return '0';
  const a = Math.abs(x);
  return a >= 1e-3 && a < 1e6 ? String(Number(x.toPrecision(6))) : x.toExponential(2);
};

function caseLines(c, titles) {
  if (c.passed) {
    const d = c.details ?? {};
    const errors = d.fields
      ? Object.values(d.fields).reduce((m, f) => Math.max(m, f.max_abs_error ?? 0), 0)
      : d.max_abs_error;
    return [`  pass  ${c.name}${errors !== undefined ? `  (max abs error ${fmt(errors)})` : ''}`];
  }
  const d = c.details ?? {};
  const field = d.field ? `field '${d.field}': ` : '';
  const lines = [`  FAIL  ${c.name}`];
  if (c.problem === 'error') lines.push(`        ${c.error}`);
  else if (c.problem === 'shape') lines.push(`        ${field}shape [${d.got_shape.join(', ')}], expected [${d.expected_shape.join(', ')}]`);
  else if (c.problem === 'type' || c.problem === 'missing') lines.push(`        ${field}${d.message}`);
  else {
    if (d.nonfinite) {
      const where = d.nonfinite.map((n) => `${n.value} at ${n.index}`).join(', ');
      const more = d.nonfinite_count > d.nonfinite.length ? ` and ${d.nonfinite_count - d.nonfinite.length} more` : '';
      lines.push(`        ${field}non-finite values where numbers are expected: ${where}${more}`);
    }
    lines.push(`        ${field}max abs error ${fmt(d.max_abs_error)}, max rel error ${fmt(d.max_rel_error)}` +
      ' (over finite entries)');
    if (d.first_mismatch) {
      const m = d.first_mismatch;
      lines.push(`        first mismatch at ${m.index}: expected ${fmt(m.expected)}, got ${fmt(m.got)}`);
    }
  }
  if (c.matches?.length) lines.push(`        looks like: ${c.matches.map((id) => titles.get(id) ?? id).join('; ')}`);
  return lines;
}

function readableReport(report, titles) {
  const lines = [`${report.exercise}: ${report.passed_count} of ${report.total} tests passed`];
  for (const c of report.cases) lines.push(...caseLines(c, titles));
  if (report.diagnosis) {
    const { title, id, summary, explanation } = report.diagnosis;
    lines.push('', `diagnosis: ${title} [${id}]`, ...(summary ? [`  ${summary}`] : []), `  ${explanation}`);
  }
  const { atol, rtol } = report.tolerance;
  lines.push('', `tolerance: |got - expected| <= ${atol.toExponential()} + ${rtol.toExponential()} * |expected| ` +
    '(see core/judge/compare.hpp for why)');
  return lines.join('\n');
}

/**
 * Judges the solution in the file SOLUTIONPATH to exercise NAME with CORE (from wasm/load-node.mjs's
 * loadJudge): runs it on every case in a worker thread, each case with TIMEOUTSECONDS,
 * and resolves to the judge's report. Throws UsageError for an unknown exercise, an
 * unreadable file or a thrown value that cannot be turned into text. What the command
 * line runs, and what tests/exercises judges every solution file with.
 */
export async function judgeFile(core, name, solutionPath, timeoutSeconds = 3, catalogue = callCore(core, 'judgeCatalogue')) {
  const exercise = catalogue.find((e) => e.id === name);
  if (!exercise) throw new UsageError(`unknown exercise '${name}' (known: ${catalogue.map((e) => e.id).join(', ')})`);
  const file = path.resolve(solutionPath);
  let code;
  try {
    code = fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${solutionPath}: ${error.code === 'ENOENT' ? 'no such file' : error.message}`);
  }
  const casesJson = core.judgeCases(name);
  const outputs = await runSolution({ code, file, name, casesJson, count: exercise.cases, timeoutSeconds });
  // A thrown value that cannot be turned into text: the judge cannot say what went wrong.
  const unprintable = outputs.find((output) => isUnprintable(output.error));
  if (unprintable) throw new UsageError(unprintable.error);
  return callCore(core, 'judgeOutputs', name, JSON.stringify(outputs));
}

async function main(argv) {
  let options;
  try {
    options = parseArgs(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`judge: ${error.message}\n`);
    return 2;
  }
  try {
    const { loadJudge } = await import('../wasm/load-node.mjs');
    let core;
    try {
      core = await loadJudge();
    } catch (error) {
      throw new UsageError(error.message);
    }
    const catalogue = callCore(core, 'judgeCatalogue');
    if (options.list) {
      for (const e of catalogue) process.stdout.write(`${e.id}  (${e.cases} tests, ${e.mistakes.length} named mistakes)\n`);
      return 0;
    }
    const [name, solutionPath] = options.positional;
    const report = await judgeFile(core, name, solutionPath, options.timeoutSeconds, catalogue);
    const exercise = catalogue.find((e) => e.id === name);
    const titles = new Map(exercise.mistakes.map((m) => [m.id, m.title]));
    process.stdout.write((options.json ? JSON.stringify(report, null, 2) : readableReport(report, titles)) + '\n');
    return report.passed ? 0 : 1;
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`judge: ${error.message}\n`);
    return 2;
  }
}

// ---------------------------------------------------------------- entry

// Run as a command (node tools/judge.mjs ...), as the solution's worker thread, or
// imported for judgeFile (tests/exercises), when it does neither.
const isCommand = isMainThread && process.argv[1] !== undefined &&
  fs.realpathSync(path.resolve(process.argv[1])) === fs.realpathSync(fileURLToPath(import.meta.url));
if (isCommand) process.exitCode = await main(process.argv.slice(2));
else if (!isMainThread) workerMain(workerData);
