// The values that cross between the judge, the sandbox and the learner's code.
//
// JSON has no NaN or infinities, so the judge (core/judge/values.hpp) spells them
// as the strings "NaN", "Infinity" and "-Infinity" in both directions. decode()
// turns a case's arguments back into plain JavaScript numbers before the
// learner's function sees them; encode() checks what the function returned and
// spells it the judge's way, refusing anything that is not numbers in plain
// arrays and objects (a function, undefined, a string, a typed array ...) with a
// message that says where it is.
//
// Plain JavaScript with JSDoc types, so that the page, its sandbox worker and
// tools/judge.mjs (Node, no build step) share this one file; codec.d.mts gives
// TypeScript the same types.

const spelled = { NaN: NaN, Infinity: Infinity, '-Infinity': -Infinity };

/** The judge's JSON value -> JavaScript: "NaN", "Infinity", "-Infinity" become numbers. */
export function decode(value) {
  if (typeof value === 'string') return Object.hasOwn(spelled, value) ? spelled[value] : value;
  if (Array.isArray(value)) return value.map(decode);
  if (value !== null && typeof value === 'object') {
    const out = {};
    for (const [key, item] of Object.entries(value)) out[key] = decode(item);
    return out;
  }
  return value;
}

/** JSON text from the judge -> JavaScript values (decode after JSON.parse). */
export function decodeJson(text) {
  return decode(JSON.parse(text));
}

/** One number the judge's way: finite numbers as they are, the others as strings. */
export function encodeNumber(x) {
  if (Number.isNaN(x)) return 'NaN';
  if (x === Infinity) return 'Infinity';
  if (x === -Infinity) return '-Infinity';
  return x;
}

/** A number from a report ("NaN" and friends included) -> a JavaScript number. */
export function decodeNumber(x) {
  return typeof x === 'string' && Object.hasOwn(spelled, x) ? spelled[x] : Number(x);
}

/** What encode() throws: the learner's function returned something the judge cannot read. */
export class WrongTypeError extends Error {
  constructor(message) {
    super(message);
    this.name = 'WrongTypeError';
  }
}

// How a value that is not allowed is named in the message.
function describe(value) {
  if (value === undefined) return 'undefined';
  if (value === null) return 'null';
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'string') return `the string ${JSON.stringify(value.length > 20 ? value.slice(0, 20) + '…' : value)}`;
  if (typeof value === 'object') {
    const name = Object.prototype.toString.call(value).slice(8, -1);
    return /^[AEIOU]/.test(name) ? `an ${name}` : `a ${name}`;
  }
  return `a ${typeof value}`;
}

// Advice for the usual wrong returns.
function advice(value) {
  if (value === undefined) return ' (a missing return statement?)';
  if (ArrayBuffer.isView(value)) return ': convert it with Array.from(...)';
  if (value && typeof value.then === 'function') return ': the function must return its result, not a Promise';
  return '';
}

// Plain objects from any realm (the CLI runs solutions in a node:vm context):
// the prototype is some realm's Object.prototype, or null.
function isPlainObject(value) {
  const proto = Object.getPrototypeOf(value);
  return proto === null || Object.getPrototypeOf(proto) === null;
}

/**
 * A learner's result -> the judge's JSON value. Numbers (non-finite ones spelled
 * as strings), nested in plain arrays and plain objects; anything else throws a
 * WrongTypeError naming where it was found, e.g. "result[1][0] is undefined".
 */
export function encode(value, where = 'the result') {
  const seen = new Set();
  const walk = (item, path) => {
    if (typeof item === 'number') return encodeNumber(item);
    const isArray = Array.isArray(item);
    if (!isArray && !(item !== null && typeof item === 'object' && isPlainObject(item))) {
      throw new WrongTypeError(`${path} is ${describe(item)}${advice(item)}; expected numbers in plain arrays` +
        (path === where ? ' (or an object of them)' : ''));
    }
    if (seen.has(item)) throw new WrongTypeError(`${path} contains itself`);
    seen.add(item);
    let out;
    if (isArray) {
      out = new Array(item.length);
      // A for loop, not map(): map skips holes, and a hole must be reported.
      for (let i = 0; i < item.length; ++i) out[i] = walk(item[i], `${path}[${i}]`);
    } else {
      out = {};
      for (const key of Object.keys(item)) out[key] = walk(item[key], `${path}.${key}`);
    }
    seen.delete(item);
    return out;
  };
  return walk(value, where);
}
