// The exercise judge end to end, as the command line a learner uses (tools/judge.mjs)
// judges a file:
//
//   exercises/   one folder per exercise (exercises/read.mjs says what it holds): the
//                folders are the judge's exercises in its order; for every exercise,
//                solution.js passes (no diagnosis) and, for every mistake the judge's
//                catalogue names, solution.js with that mistake's edits (mistakes.json)
//                fails with exactly that diagnosis. A mistake without edits fails the
//                test, and so do edits that name no mistake of the catalogue, and an
//                edit whose text is not found exactly once.
//   agreement    the diagnosis and the cases' "looks like" agree, for every solution and
//                mistake: no diagnosis while a failing case names a mistake; a diagnosis
//                counts the failing cases that name it. The partial mistakes of
//                mistakes.json are learners' code that only some failing cases show as a
//                mistake (a plain softmax with zeros for a fully masked row, for softmaxWithSink).
//   page texts   every exercise has a statement, parameters, hints; its starter fails cleanly.
//   sandbox      a syntax error reports its line and column; a thrown exception its line;
//                an endless loop times out; wrong return types are named, not crashed on.
//   usage        no arguments, an unknown exercise, a missing file, an unknown option,
//                a bad --timeout: exit 2 and one line on stderr.
//
// The solutions, mistakes and starters are judged by the command's own judgeFile in this
// process (each still in a worker thread of its own), which spares 80 starts of Node and
// of the wasm judge; the command's exit status and output for a passing and a failing
// file, and everything else, run it as a child process.
//   codec        web/src/exercises/codec.mjs, which the page, its worker and the CLI share.
//
// The judge compares with |got - expected| <= 1e-9 + 1e-6 |expected| (core/judge/compare.hpp):
// the solutions here are written independently of the C++ and pass or fail by that rule alone.
// Run by ctest (ANATOMY_WASM_DIR set), or by hand: node --test tests/exercises/solutions.test.mjs
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import { fileURLToPath } from 'node:url';

import { loadJudge } from '../../wasm/load-node.mjs';
import { decode, decodeJson, encode, WrongTypeError } from '../../web/src/exercises/codec.mjs';
import { describeRun, runJudge, scratchFolder } from './judge-process.mjs';
import { judgeFile } from '../../tools/judge.mjs';
import { applyEdits, mistakeSource, readExercises } from '../../exercises/read.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..');
const judgeCli = path.join(repo, 'tools', 'judge.mjs');

const core = await loadJudge();
const catalogue = JSON.parse(core.judgeCatalogue());

/** Runs tools/judge.mjs; resolves to {code, stdout, stderr, report (with --json), ms}. */
const judge = (args) => runJudge(process.execPath, [judgeCli, ...args]);
/** Judges a file in this process: the report `judge(... '--json')` would print. */
const judgeHere = (exercise, file) => judgeFile(core, exercise, file, 3, catalogue);
const scratch = scratchFolder('anatomy-judge-');
const exercises = readExercises();
const exerciseById = new Map(exercises.map((e) => [e.id, e]));
/** A file holding an exercise's solution.js, or that solution with a mistake's edits. */
const solutionFile = (exercise, name = 'solution') => scratch.write(`${exercise}-${name}.js`,
  name === 'solution' ? exerciseById.get(exercise).solution : mistakeSource(exerciseById.get(exercise), name));

/** The report's summary says what its cases say: a diagnosis exactly when a failing case names a mistake, with their count. */
function assertDiagnosisAgrees(report, label) {
  const failing = report.cases.filter((c) => !c.passed);
  const naming = failing.filter((c) => c.matches.length > 0);
  if (report.passed || naming.length === 0) {
    assert.equal(report.diagnosis, null, `${label}: a diagnosis while no failing case names a mistake`);
    return;
  }
  const d = report.diagnosis;
  assert.ok(d, `${label}: no diagnosis while ${naming.length} of ${failing.length} failing cases name a mistake (${naming.map((c) => c.matches).join('; ')})`);
  const explained = failing.filter((c) => c.matches.includes(d.id)).length;
  assert.ok(explained > 0, `${label}: the diagnosis ${d.id} is named by no failing case`);
  assert.equal(d.failing, failing.length, `${label}: failing count`);
  assert.equal(d.explained, explained, `${label}: the cases that name ${d.id}`);
  // No other mistake is named by more failing cases than the diagnosis.
  for (const id of new Set(naming.flatMap((c) => c.matches)))
    assert.ok(failing.filter((c) => c.matches.includes(id)).length <= explained, `${label}: ${id} is named more often than ${d.id}`);
  const counted = explained === failing.length
    ? (failing.length === 1 ? /^The failing test looks like this mistake\.$/ : new RegExp(`^All ${failing.length} failing tests look like this mistake\\.$`))
    : new RegExp(`^${explained} of the ${failing.length} failing tests looks? like this mistake; `);
  assert.match(d.summary, counted, label);
}
const scratchFile = scratch.write;

// Two child processes at a time: the machine has two cores.
describe('every exercise\'s solution passes and every mistake is diagnosed as named', { concurrency: 2 }, () => {
  test('the judge has the 12 exercises of the page', () => {
    assert.equal(catalogue.length, 12);
  });

  test('the folders under exercises/ are the judge\'s exercises, same ids, same order', () => {
    assert.deepEqual(exercises.map((e) => e.id), catalogue.map((e) => e.id));
  });

  test('every mistake of the catalogue has edits in mistakes.json, and every entry is a mistake of the judge or partial', () => {
    const missing = [];
    const stray = [];
    for (const exercise of catalogue) {
      const entries = exerciseById.get(exercise.id).mistakes['solution.js'];
      const stated = entries.filter((m) => !m.partial).map((m) => m.mistake);
      for (const { id } of exercise.mistakes) if (!stated.includes(id)) missing.push(`${exercise.id}/${id}`);
      for (const id of stated) if (!exercise.mistakes.some((m) => m.id === id)) stray.push(`${exercise.id}/${id}`);
      assert.equal(new Set(stated).size, stated.length, `${exercise.id}: a mistake stated twice`);
    }
    assert.deepEqual(missing, [], 'mistakes without edits of solution.js');
    assert.deepEqual(stray, [], 'edits that name no mistake of the judge');
  });

  test('every edit finds its text exactly once, and every mistake changes the solution', () => {
    for (const exercise of exercises) {
      for (const file of ['solution.js', 'solution.py']) {
        for (const entry of exercise.mistakes[file]) {
          const name = entry.mistake ?? entry.partial;
          assert.ok(entry.note && entry.edits.length >= 1, `${exercise.id}/${file} ${name}: a note and one edit or more`);
          const source = mistakeSource(exercise, name, file);
          assert.notEqual(source.slice(source.indexOf('\n') + 1), file === 'solution.py' ? exercise.solutionPython : exercise.solution,
            `${exercise.id}/${file} ${name} changes nothing`);
        }
      }
    }
    // An edit found twice, or not at all, is refused rather than applied somewhere.
    assert.throws(() => applyEdits('a = 1; b = 1;', [{ replace: '= 1', with: '= 2' }], 'twice'), /twice: edit 1 finds "= 1" 2 times, not once/);
    assert.throws(() => applyEdits('a = 1;', [{ replace: 'a = 1;', with: 'a = 2;' }, { replace: 'a = 1;', with: '' }], 'gone'), /gone: edit 2 finds "a = 1;" 0 times/);
    assert.equal(applyEdits('x $& y', [{ replace: 'x', with: '$&$&' }], 'dollar'), '$&$& $& y');
  });

  for (const exercise of catalogue) {
    test(`${exercise.id}: solution.js passes every test`, async () => {
      const report = await judgeHere(exercise.id, solutionFile(exercise.id));
      assert.equal(report.passed, true, JSON.stringify(report.cases.filter((c) => !c.passed)));
      assert.equal(report.passed_count, exercise.cases);
      assert.equal(report.diagnosis, null);
      assertDiagnosisAgrees(report, `${exercise.id}/solution.js`);
    });
    for (const mistake of exercise.mistakes) {
      test(`${exercise.id}: ${mistake.id} fails with the diagnosis "${mistake.title}"`, async () => {
        const report = await judgeHere(exercise.id, solutionFile(exercise.id, mistake.id));
        assert.equal(report.passed, false);
        assert.equal(report.diagnosis?.id, mistake.id,
          `diagnosed as ${JSON.stringify(report.diagnosis)}; per case: ` +
            JSON.stringify(report.cases.map((c) => ({ name: c.name, passed: c.passed, matches: c.matches }))));
        assert.ok(report.cases.some((c) => c.matches.includes(mistake.id)), 'no case names the mistake');
        assertDiagnosisAgrees(report, `${exercise.id}/${mistake.id}`);
      });
    }
  }
});

describe('the diagnosis agrees with the cases when only some failing cases show a mistake', { concurrency: 2 }, () => {
  const partial = exercises.flatMap((e) => e.mistakes['solution.js'].filter((m) => m.partial).map((m) => [e.id, m.partial]));

  test('mistakes.json holds partial mistakes for exercises of the judge', () => {
    assert.ok(partial.length >= 1);
    for (const [exercise] of partial) assert.ok(catalogue.some((e) => e.id === exercise), exercise);
  });

  for (const [exercise, name] of partial) {
    test(`${exercise}/${name}: the diagnosis counts the failing cases that name it`, async () => {
      const report = await judgeHere(exercise, solutionFile(exercise, name));
      assert.equal(report.passed, false);
      assertDiagnosisAgrees(report, `${exercise}/${name}`);
    });
  }

  test('softmaxWithSink, a plain softmax with zeros for a masked row: 3 of the 4 failing tests look like "The sink left out"', async () => {
    const file = solutionFile('softmaxWithSink', 'zero_on_masked_rows');
    const report = await judgeHere('softmaxWithSink', file);
    const failing = report.cases.filter((c) => !c.passed);
    assert.deepEqual(failing.map((c) => c.matches), [['sink_ignored'], ['sink_ignored'], ['sink_ignored'], []],
      JSON.stringify(report.cases.map((c) => ({ name: c.name, passed: c.passed, matches: c.matches }))));
    assert.match(failing[3].name, /every key masked/);
    assert.equal(report.diagnosis?.id, 'sink_ignored');
    assert.equal(report.diagnosis.summary, '3 of the 4 failing tests look like this mistake; the other matches none of the mistakes the judge knows.');
    // The command line prints the same sentence under the diagnosis.
    const run = await judge(['softmaxWithSink', file]);
    assert.equal(run.code, 1, describeRun(run));
    assert.match(run.stdout, /diagnosis: The sink left out \[sink_ignored\]\n  3 of the 4 failing tests look like this mistake; the other matches none/);
  });

  test('the summary counts the failing tests that look like another mistake, like none, or stopped with an error', () => {
    // softmaxWithSink's outputs case by case from its solution and mistakes (run here, in a fresh context).
    const sink = exerciseById.get('softmaxWithSink');
    const source = (name) => (name === 'solution' ? sink.solution : mistakeSource(sink, name));
    const run = (name) => vm.runInNewContext(`${source(name)}; softmaxWithSink`);
    const { cases } = decodeJson(core.judgeCases('softmaxWithSink'));
    const outputs = cases.map((c, i) => ({ value: encode(run(['sink_ignored', 'sink_ignored', 'sink_in_numerator', 'solution', 'solution'][i])(...c.args)) }));
    outputs[3] = { error: 'Error: stopped (line 1)' };
    outputs[4].value[0][0] += 0.5; // matches nothing
    const report = JSON.parse(core.judgeOutputs('softmaxWithSink', JSON.stringify(outputs)));
    assert.deepEqual(report.cases.map((c) => c.matches), [['sink_ignored'], ['sink_ignored'], ['sink_in_numerator'], [], []]);
    assertDiagnosisAgrees(report, 'mixed outputs');
    assert.equal(report.diagnosis.summary,
      '2 of the 5 failing tests look like this mistake; 1 looks like another mistake (named below), 1 matches none of the mistakes the judge knows, 1 stopped with an error.');
  });
});

// ---------------------------------------------------------------- what the page shows

describe('the page\'s texts (exercises/<NN-id>/, the page\'s `virtual:exercises`)', { concurrency: 2 }, () => {
  test('every exercise has a statement, parameters, a starter, two or three hints and a solution', () => {
    for (const t of exercises) {
      assert.ok(t.title && t.statement.trim().length > 100, `${t.id}: statement`);
      assert.ok(t.parameters.length >= 1 && t.returns.type, `${t.id}: signature`);
      assert.ok(t.starter.includes(`function ${t.id}(`), `${t.id}: the starter defines ${t.id}`);
      assert.ok(t.hints.length >= 2 && t.hints.length <= 3, `${t.id}: ${t.hints.length} hints`);
      assert.ok(t.solution.includes(`function ${t.id}(`), `${t.id}: the solution defines ${t.id}`);
    }
  });

  for (const t of exercises) {
    test(`${t.id}: the starter runs and fails cleanly`, async () => {
      const report = await judgeHere(t.id, scratchFile(`${t.id}-starter.js`, t.starter));
      assert.equal(report.passed, false);
      for (const c of report.cases) {
        assert.ok(c.problem === 'error' ? /not implemented/.test(c.error) : c.problem === 'mismatch',
          `${t.id}: starter case ${c.name}: ${c.problem} ${c.error ?? ''}`);
      }
    });
  }
});

// ---------------------------------------------------------------- the sandbox, through the CLI

describe('the sandbox reports what went wrong, and where', { concurrency: 2 }, () => {
  test('a syntax error gives its line and column', async () => {
    const file = scratchFile('syntax.js', 'function softmax(x) {\n  const y = 1;\n  return x +* y;\n}\n');
    const run = await judge(['softmax', file, '--json']);
    assert.equal(run.code, 1, describeRun(run));
    for (const c of run.report.cases) assert.equal(c.error, "SyntaxError: Unexpected token '*' (line 3, column 13)");
  });

  test('a thrown exception gives its message and line', async () => {
    const file = scratchFile('throws.js', '// comment\nfunction softmax(x) {\n  return x.map((row) => row.nope.length);\n}\n');
    const run = await judge(['softmax', file, '--json']);
    assert.equal(run.code, 1, describeRun(run));
    assert.match(run.report.cases[0].error, /^TypeError: .*'length'.* \(line 3, column \d+\)$/);
  });

  test('an endless loop times out, and the cases after it are not run', async () => {
    const file = scratchFile('loop.js', 'function softmax(x) {\n  for (;;) {}\n}\n');
    const run = await judge(['softmax', file, '--json', '--timeout', '0.5']);
    assert.equal(run.code, 1, describeRun(run));
    assert.equal(run.report.cases[0].error, 'timed out after 0.5 s');
    assert.match(run.report.cases[1].error, /not run/);
    assert.ok(run.ms < 10_000, `took ${run.ms} ms`);
  });

  test('a missing function, undefined, a function or a typed array are named as wrong types', async () => {
    const cases = {
      'nothing.js': ['function other() {}', /defines no function called softmax/],
      'undefined.js': ['function softmax(x) { x.map((r) => r); }', /wrong type: the result is undefined \(a missing return statement\?\)/],
      'function.js': ['function softmax(x) { return () => x; }', /wrong type: the result is a function/],
      'typed.js': ['function softmax(x) { return x.map((r) => Float64Array.from(r)); }', /wrong type: the result\[0\] is a Float64Array: convert it with Array.from/],
      'hole.js': ['function softmax(x) { return x.map((r) => { const a = []; a[r.length - 1] = 0; return a; }); }', /wrong type: the result\[0\]\[0\] is undefined/],
      'string.js': ['function softmax(x) { return x.map((r) => r.map(() => "NaN")); }', /wrong type: the result\[0\]\[0\] is the string "NaN"/],
    };
    for (const [name, [code, pattern]] of Object.entries(cases)) {
      const run = await judge(['softmax', scratchFile(name, code), '--json']);
      assert.equal(run.code, 1, describeRun(run));
      assert.match(run.report.cases[0].error, pattern, name);
    }
  });

  test('a number where an array is expected is a shape problem, an object a type problem', async () => {
    const number = await judge(['softmax', scratchFile('number.js', 'function softmax(x) { return 1; }'), '--json']);
    assert.equal(number.report.cases[0].problem, 'shape');
    const object = await judge(['attentionFlops', scratchFile('flops.js', 'function attentionFlops(d, T) { return [d, T]; }'), '--json']);
    assert.equal(object.report.cases[0].problem, 'type');
  });

  test('the command exits 0 on a pass and 1 on a fail, and its --json report is judgeFile\'s', async () => {
    for (const [name, code] of [['solution', 0], ['scaled_by_d', 1]]) {
      const solution = solutionFile('attention', name);
      const run = await judge(['attention', solution, '--json']);
      assert.equal(run.code, code, describeRun(run));
      assert.deepEqual(run.report, await judgeHere('attention', solution), name);
    }
  });

  test('the readable report names the diagnosis and the tolerance', async () => {
    const run = await judge(['rmsnorm', solutionFile('rmsnorm', 'rms_eps_outside_sqrt')]);
    assert.equal(run.code, 1);
    assert.match(run.stdout, /^rmsnorm: 2 of 3 tests passed$/m);
    assert.match(run.stdout, /first mismatch at \[\d+, \d+, \d+\]: expected -?[\d.e-]+, got -?[\d.e-]+/);
    assert.match(run.stdout, /diagnosis: eps outside the square root \[rms_eps_outside_sqrt\]/);
    assert.match(run.stdout, /tolerance: \|got - expected\| <= 1e-9 \+ 1e-6 \* \|expected\|/);
  });
});

describe('usage errors exit 2 with one line on stderr', { concurrency: 2 }, () => {
  const correct = solutionFile('softmax');
  const usageCases = {
    'no arguments': [],
    'one argument': ['softmax'],
    'three arguments': ['softmax', correct, 'extra'],
    'an unknown exercise': ['nope', correct],
    'a missing file': ['softmax', path.join(scratch.folder, 'no-such-file.js')],
    'an unknown option': ['softmax', correct, '--fast'],
    'a bad timeout': ['softmax', correct, '--timeout', 'soon'],
  };
  for (const [what, args] of Object.entries(usageCases)) {
    test(what, async () => {
      const run = await judge(args);
      assert.equal(run.code, 2, describeRun(run));
      assert.equal(run.stdout, '');
      assert.equal(run.stderr.trimEnd().split('\n').length, 1, run.stderr);
      assert.match(run.stderr, /^judge: /);
    });
  }
  test('an unknown exercise lists the known ones', async () => {
    const run = await judge(['nope', correct]);
    assert.match(run.stderr, /unknown exercise 'nope' \(known: softmax, softmaxWithSink, attention, /);
  });
  test('--list prints every exercise and exits 0', async () => {
    const run = await judge(['--list']);
    assert.equal(run.code, 0);
    assert.equal(run.stdout.trim().split('\n').length, catalogue.length);
  });
});

// ---------------------------------------------------------------- the codec

describe('codec.mjs', () => {
  test('decode turns the judge\'s strings back into numbers, and nothing else', () => {
    assert.deepEqual(decode([['NaN', 'Infinity'], ['-Infinity', 1.5]]), [[NaN, Infinity], [-Infinity, 1.5]]);
    assert.deepEqual(decode({ a: ['NaN'], b: true, c: 'text' }), { a: [NaN], b: true, c: 'text' });
    assert.deepEqual(decodeJson('[1, "NaN", [false]]'), [1, NaN, [false]]);
  });

  test('encode spells non-finite numbers and round-trips through decode', () => {
    const value = { out: [[NaN, -Infinity], [Infinity, -0.25]], n: 3 };
    const encoded = encode(value);
    assert.deepEqual(encoded, { out: [['NaN', '-Infinity'], ['Infinity', -0.25]], n: 3 });
    assert.deepEqual(decode(JSON.parse(JSON.stringify(encoded))), value);
  });

  test('encode names where a wrong value sits', () => {
    const cases = [
      [undefined, /^the result is undefined \(a missing return statement\?\)/],
      [[[1, undefined]], /^the result\[0\]\[1\] is undefined/],
      [{ out: [() => 1] }, /^the result\.out\[0\] is a function/],
      [[new Float32Array(2)], /^the result\[0\] is a Float32Array: convert it with Array\.from/],
      [[1, 'two'], /^the result\[1\] is the string "two"/],
      [[true], /^the result\[0\] is a boolean/],
      [[null], /^the result\[0\] is null/],
      [[new Map()], /^the result\[0\] is a Map/],
      [Promise.resolve(1), /^the result is a Promise: the function must return its result, not a Promise/],
      [[1n], /^the result\[0\] is a bigint/],
    ];
    for (const [value, pattern] of cases) {
      assert.throws(() => encode(value), (error) => error instanceof WrongTypeError && pattern.test(error.message), String(pattern));
    }
    const cycle = [1];
    cycle.push(cycle);
    assert.throws(() => encode(cycle), /the result\[1\] contains itself/);
    // The same array twice is fine: only a cycle is refused.
    const row = [1, 2];
    assert.deepEqual(encode([row, row]), [[1, 2], [1, 2]]);
  });

  test('encode accepts plain objects and arrays from another realm (the CLI\'s vm contexts)', () => {
    const foreign = vm.runInNewContext('({ out: [[1, NaN]], extra: Object.create(null) })');
    assert.deepEqual(encode(foreign), { out: [[1, 'NaN']], extra: {} });
  });
});
