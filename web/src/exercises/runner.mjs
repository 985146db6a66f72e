// Calling a learner's function on the judge's cases, shared by the page's sandbox
// worker (sandbox-worker.ts) and the command line (tools/judge.mjs, in a
// worker_thread). Each side compiles the code its own way; from then on both do
// the same thing: decode each case's arguments, call the function, encode what it
// returned, and turn anything thrown into one line that names the learner's line.
//
// Plain JavaScript with JSDoc types, like codec.mjs; runner.d.mts has the types.

import { decode, encode, WrongTypeError } from './codec.mjs';

const escapeRegExp = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Where in the learner's file an error was thrown, from its stack: the first frame
 * in `file` (the sourceURL or file name the code was compiled under). lineOffset
 * is how many lines the compiler put before the learner's first line.
 * Returns {line, column} (1-based) or null.
 */
export function errorLocation(error, file, lineOffset = 0) {
  const stack = error && typeof error === 'object' && typeof error.stack === 'string' ? error.stack : '';
  const match = new RegExp(`${escapeRegExp(file)}:(\\d+):(\\d+)`).exec(stack);
  if (!match) return null;
  return { line: Number(match[1]) - lineOffset, column: Number(match[2]) };
}

/** How errorText starts for a thrown value it cannot turn into text (isUnprintable). */
const UNPRINTABLE = 'the solution threw a value that cannot be printed';

/**
 * "TypeError: x is not iterable (line 4, column 9)": what the report shows for a thrown
 * value. Never throws: a value whose message, name or text itself throws (a getter
 * that throws, Object.create(null)) is named as one that cannot be printed.
 */
export function errorText(error, file, lineOffset = 0) {
  try {
    return describeThrown(error, file, lineOffset);
  } catch (inner) {
    let kind;
    try {
      kind = inner instanceof Error ? String(inner.name) : typeof inner;
    } catch {
      kind = 'an exception';
    }
    return `${UNPRINTABLE} (turning it into text threw ${kind}): throw an Error with a message`;
  }
}

/** True for errorText's words about a value it could not print: the command-line judge stops on one. */
export function isUnprintable(text) {
  return typeof text === 'string' && text.startsWith(UNPRINTABLE);
}

function describeThrown(error, file, lineOffset) {
  let text;
  if (error instanceof WrongTypeError) return `wrong type: ${error.message}`;
  if (error && typeof error === 'object' && 'message' in error) {
    text = `${error.name || 'Error'}: ${error.message}`;
  } else {
    text = `threw ${typeof error === 'string' ? JSON.stringify(error) : String(error)}`;
  }
  if (error instanceof RangeError && /call stack/i.test(String(error.message))) text += ' (endless recursion?)';
  const where = errorLocation(error, file, lineOffset);
  return where ? `${text} (line ${where.line}, column ${where.column})` : text;
}

/** When the code defines no function called `name`: the error every case reports. */
export function missingFunctionText(name, found) {
  return found === undefined
    ? `the code defines no function called ${name}`
    : `${name} is ${typeof found}, not a function`;
}

/**
 * Runs fn on every case of the judge's cases JSON ({cases: [{name, args}]}), in
 * order, calling post(index, output) after each: output is {value} (already
 * encoded for the judge) or {error}. The arguments are decoded afresh for every
 * case, so a function that changes its inputs in place harms no later case.
 */
export function runCases(fn, casesJson, post, { file, lineOffset = 0 } = {}) {
  const cases = JSON.parse(casesJson).cases;
  for (let index = 0; index < cases.length; ++index) {
    const args = decode(cases[index].args);
    let output;
    try {
      output = { value: encode(fn(...args)) };
    } catch (error) {
      output = { error: errorText(error, file, lineOffset) };
    }
    post(index, output);
  }
}
