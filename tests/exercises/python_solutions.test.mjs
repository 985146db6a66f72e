// The exercise judge for Python solutions, through the command line a learner uses
// (tools/judge.py, run as a child process with --json):
//
//   exercises/   for every exercise (exercises/read.mjs), solution.py passes (exit 0, no
//                diagnosis) and solution.py with each mistake's edits (mistakes.json) fails
//                (exit 1) with exactly that diagnosis; at least two mistakes per exercise,
//                and none that names no mistake of the catalogue. softmax's
//                solution_torch.py returns a torch tensor (skipped without torch).
//   sandbox      a syntax error reports its line; an exception its line in the learner's
//                file; an endless loop times out (--timeout 1) and the later cases are not
//                run; wrong return types and ragged lists are named; prints go to stderr.
//   usage        no arguments, an unknown exercise, a missing file, an unknown option, a bad
//                --timeout, no attn: exit 2 and one line on stderr.
//   page         each exercise's Python signature (exercise.json, shown by the page) defines
//                the function judge.py calls, with as many arguments as the cases pass.
//
// The judge compares with |got - expected| <= 1e-9 + 1e-6 |expected| (core/judge/compare.hpp):
// the solutions here are NumPy written independently of the C++ and of the JavaScript ones,
// and pass or fail by that rule alone.
// Run by ctest (ATTN and ANATOMY_PYTHON set), or by hand from the repository root:
//   node --test tests/exercises/python_solutions.test.mjs
// ATTN defaults to build/native/native/attn, ANATOMY_PYTHON to /usr/bin/python3 (NumPy).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeRun, runJudge, scratchFolder } from './judge-process.mjs';
import { mistakeSource, readExercises } from '../../exercises/read.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..');
const judgePy = path.join(repo, 'tools', 'judge.py');
const python = process.env.ANATOMY_PYTHON || '/usr/bin/python3';
const attn = process.env.ATTN || path.join(repo, 'build', 'native', 'native', 'attn');

const catalogue = JSON.parse(execFileSync(attn, ['judge', '--list'], { encoding: 'utf8' }));
const hasTorch = (() => {
  try {
    execFileSync(python, ['-c', 'import torch'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/** Runs tools/judge.py; resolves to {code, stdout, stderr, report (with --json), ms}. */
const judge = (args, env = {}) => runJudge(python, [judgePy, ...args], { ...process.env, ATTN: attn, ...env });
const scratch = scratchFolder('anatomy-judge-py-');
const scratchFile = scratch.write;
const exercises = new Map(readExercises().map((e) => [e.id, e]));
/** A file holding an exercise's solution.py, or that solution with a mistake's edits. */
const solutionFile = (exercise, name = 'solution') => scratchFile(`${exercise}-${name}.py`,
  name === 'solution' ? exercises.get(exercise).solutionPython : mistakeSource(exercises.get(exercise), name, 'solution.py'));

const snakeCase = (id) => id.replace(/(?<=[a-z0-9])([A-Z])/g, '_$1').toLowerCase();

// Two child processes at a time: the machine has two cores.
describe('every Python solution passes and every mistake is diagnosed as named', { concurrency: 2 }, () => {
  test('every exercise has solution.py and two mistakes or more; every mistake is one of the judge\'s', () => {
    const short = [];
    const stray = [];
    for (const exercise of catalogue) {
      const stated = (exercises.get(exercise.id)?.mistakes['solution.py'] ?? []).map((m) => m.mistake);
      const mistakes = stated.filter((id) => exercise.mistakes.some((m) => m.id === id));
      if (!exercises.get(exercise.id)?.solutionPython || mistakes.length < 2) short.push(`${exercise.id}: ${stated.join(', ') || 'nothing'}`);
      for (const id of stated) if (!mistakes.includes(id)) stray.push(`${exercise.id}/${id}`);
    }
    assert.deepEqual([...exercises.keys()], catalogue.map((e) => e.id), 'the exercise folders are the judge\'s exercises');
    assert.deepEqual(short, [], 'exercises without solution.py and two mistakes');
    assert.deepEqual(stray, [], 'edits of solution.py that name no mistake of the judge');
  });

  for (const exercise of catalogue) {
    test(`${exercise.id}: solution.py passes every test`, async () => {
      const run = await judge([exercise.id, solutionFile(exercise.id), '--json']);
      assert.equal(run.code, 0, describeRun(run));
      assert.equal(run.report.passed, true);
      assert.equal(run.report.passed_count, exercise.cases);
      assert.equal(run.report.diagnosis, null);
    });
    const stated = exercises.get(exercise.id).mistakes['solution.py'].map((m) => m.mistake);
    for (const mistake of exercise.mistakes) {
      if (!stated.includes(mistake.id)) continue;
      test(`${exercise.id}: ${mistake.id} fails with the diagnosis "${mistake.title}"`, async () => {
        const run = await judge([exercise.id, solutionFile(exercise.id, mistake.id), '--json']);
        assert.equal(run.code, 1, describeRun(run));
        assert.equal(run.report.passed, false);
        assert.equal(run.report.diagnosis?.id, mistake.id,
          `diagnosed as ${JSON.stringify(run.report.diagnosis)}; per case: ` +
            JSON.stringify(run.report.cases.map((c) => ({ name: c.name, passed: c.passed, error: c.error, matches: c.matches }))));
        assert.ok(run.report.cases.some((c) => c.matches.includes(mistake.id)), 'no case names the mistake');
      });
    }
  }

  const torchFile = exercises.get('softmax').otherPython.solution_torch;
  test('softmax: solution_torch.py, which returns a torch tensor, passes', async (t) => {
    if (!hasTorch) {
      t.skip(`SKIPPED: ${python} cannot import torch`);
      return;
    }
    const run = await judge(['softmax', torchFile, '--json']);
    assert.equal(run.code, 0, describeRun(run));
    assert.equal(run.report.diagnosis, null);
  });
});

// ---------------------------------------------------------------- the child process

describe('the solution\'s process reports what went wrong, and where', { concurrency: 2 }, () => {
  test('a syntax error gives its line', async () => {
    const file = scratchFile('syntax.py', 'import numpy as np\n\ndef softmax(x):\n    y = 1\n    return x +* y\n');
    const run = await judge(['softmax', file, '--json']);
    assert.equal(run.code, 1, describeRun(run));
    for (const c of run.report.cases) assert.match(c.error, /^SyntaxError: .* \(line 5, column \d+\)$/);
  });

  test('an exception gives its message and its line in the learner\'s file, not in NumPy', async () => {
    const file = scratchFile('throws.py', 'import numpy as np\n\n\ndef softmax(x):\n    return x @ np.ones((2, 2))\n');
    const run = await judge(['softmax', file, '--json']);
    assert.equal(run.code, 1, describeRun(run));
    assert.match(run.report.cases[0].error, /^ValueError: .* \(line 5\)$/);
  });

  test('an exception while the file loads is every case\'s error, with its line', async () => {
    const file = scratchFile('import.py', 'import numpy as np\nimport no_such_module_here\n');
    const run = await judge(['softmax', file, '--json']);
    assert.equal(run.code, 1, describeRun(run));
    for (const c of run.report.cases) assert.equal(c.error, "ModuleNotFoundError: No module named 'no_such_module_here' (line 2)");
  });

  test('an endless loop times out, and the cases after it are not run', async () => {
    const file = scratchFile('loop.py', 'def softmax(x):\n    while True:\n        pass\n');
    const run = await judge(['softmax', file, '--json', '--timeout', '1']);
    assert.equal(run.code, 1, describeRun(run));
    assert.equal(run.report.cases[0].error, 'timed out after 1 s');
    for (const c of run.report.cases.slice(1)) assert.match(c.error, /^not run: an earlier case timed out$/);
    assert.ok(run.ms < 15_000, `took ${run.ms} ms`);
  });

  test('wrong return types, ragged lists and a missing function are named', async () => {
    const cases = {
      'nothing.py': ['def other(x):\n    return x\n', /^the file defines no function called softmax$/],
      'none.py': ['def softmax(x):\n    x.sum()\n', /^wrong type: returned None \(a missing return statement\?\), expected a NumPy array/],
      'string.py': ['def softmax(x):\n    return "NaN"\n', /^wrong type: returned a str \('NaN'\), expected/],
      'object.py': ['def softmax(x):\n    return object()\n', /^wrong type: returned an object, expected/],
      'nested.py': ['def softmax(x):\n    return [[1.0, None]]\n', /^wrong type: result\[0\]\[1\] is None, expected numbers$/],
      'ragged.py': ['def softmax(x):\n    return [[1.0, 2.0], [3.0]]\n', /^wrong type: returned a ragged list: result\[0\] is \[2\], result\[1\] is \[1\]; expected a rectangular array$/],
      'bool.py': ['def softmax(x):\n    return x > 0\n', /^wrong type: returned a NumPy array of bool/],
      'generator.py': ['def softmax(x):\n    return (row for row in x)\n', /^wrong type: returned a generator: wrap it in np\.array\(list\(\.\.\.\)\)/],
      'not_function.py': ['softmax = 3\n', /^softmax is an int, not a function$/],
    };
    for (const [name, [code, pattern]] of Object.entries(cases)) {
      const run = await judge(['softmax', scratchFile(name, code), '--json']);
      assert.equal(run.code, 1, describeRun(run));
      assert.match(run.report.cases[0].error, pattern, name);
    }
  });

  test('the camelCase name is accepted; neither name defined says which was expected', async () => {
    const camel = scratchFile('camel.py', 'import numpy as np\n\ndef attentionFlops(d, T):\n' +
      '    return {"projections": 8 * T * d * d, "scores": 2 * T * T * d, "weighted": 2 * T * T * d}\n');
    assert.equal((await judge(['attentionFlops', camel, '--json'])).code, 0);
    const neither = await judge(['decodeStep', scratchFile('neither.py', 'def decode(q):\n    return q\n'), '--json']);
    assert.equal(neither.report.cases[0].error, 'the file defines no function called decode_step (or decodeStep)');
  });

  test('lists and NumPy scalars are results too; NaN comes back as the judge spells it', async () => {
    const lists = scratchFile('lists.py', 'import numpy as np\n\ndef softmax(x):\n' +
      '    e = np.exp(x - x.max(axis=-1, keepdims=True))\n    return [[np.float64(v) for v in row] for row in (e / e.sum(axis=-1, keepdims=True))]\n');
    assert.equal((await judge(['softmax', lists, '--json'])).code, 0);
    const nan = await judge(['softmax', scratchFile('nan.py', 'import numpy as np\n\ndef softmax(x):\n    return np.full(x.shape, np.nan)\n'), '--json']);
    assert.equal(nan.code, 1, describeRun(nan));
    assert.equal(nan.report.cases[0].problem, 'nonfinite');
    assert.deepEqual(nan.report.cases[0].details.nonfinite[0], { index: '[0, 0]', value: 'NaN' });
  });

  test('a number where an array is expected is the core\'s shape problem', async () => {
    const run = await judge(['softmax', scratchFile('number.py', 'def softmax(x):\n    return 1.0\n'), '--json']);
    assert.equal(run.report.cases[0].problem, 'shape');
  });

  test('what the solution prints goes to stderr, leaving stdout to the report', async () => {
    const file = scratchFile('prints.py', 'import numpy as np\n\ndef softmax(x):\n    print("hello from the solution")\n' +
      '    e = np.exp(x - x.max(axis=-1, keepdims=True))\n    return e / e.sum(axis=-1, keepdims=True)\n');
    const run = await judge(['softmax', file, '--json']);
    assert.equal(run.code, 0, describeRun(run));
    assert.match(run.stderr, /hello from the solution/);
  });

  test('the readable report names the diagnosis and the tolerance', async () => {
    const run = await judge(['rmsnorm', solutionFile('rmsnorm', 'rms_eps_outside_sqrt')]);
    assert.equal(run.code, 1);
    assert.match(run.stdout, /^rmsnorm: 2 of 3 tests passed$/m);
    assert.match(run.stdout, /first mismatch at \[\d+, \d+, \d+\]: expected -?[\d.e-]+, got -?[\d.e-]+/);
    assert.match(run.stdout, /diagnosis: eps outside the square root \[rms_eps_outside_sqrt\]/);
    assert.match(run.stdout, /tolerance: \|got - expected\| <= 1e-9 \+ 1e-6 \* \|expected\|/);
  });

  test('a dict result\'s fields go by their Python names in the readable report', async () => {
    const run = await judge(['decodeStep', solutionFile('decodeStep', 'decode_cache_not_extended')]);
    assert.equal(run.code, 1);
    assert.match(run.stdout, /field 'k_cache': shape \[2, 2, 5, 4\], expected \[2, 2, 6, 4\]/);
  });
});

describe('usage errors exit 2 with one line on stderr', { concurrency: 2 }, () => {
  const correct = solutionFile('softmax');
  const usageCases = {
    'no arguments': [[]],
    'one argument': [['softmax']],
    'three arguments': [['softmax', correct, 'extra']],
    'an unknown exercise': [['nope', correct]],
    'a missing file': [['softmax', path.join(scratch.folder, 'no-such-file.py')]],
    'an unknown option': [['softmax', correct, '--fast']],
    'a bad timeout': [['softmax', correct, '--timeout', 'soon']],
    'no attn': [['softmax', correct], { ATTN: path.join(scratch.folder, 'no-attn') }],
  };
  for (const [what, [args, env]] of Object.entries(usageCases)) {
    test(what, async () => {
      const run = await judge(args, env);
      assert.equal(run.code, 2, describeRun(run));
      assert.equal(run.stdout, '');
      assert.equal(run.stderr.trimEnd().split('\n').length, 1, run.stderr);
      assert.match(run.stderr, /^judge: /);
    });
  }
  test('an unknown exercise lists the known ones; a missing file says so; no attn says how to build it', async () => {
    assert.match((await judge(['nope', correct])).stderr, /unknown exercise 'nope' \(known: softmax, softmaxWithSink, attention, /);
    assert.match((await judge(['softmax', path.join(scratch.folder, 'gone.py')])).stderr, /cannot read .*gone\.py: no such file/);
    assert.match((await judge(['softmax', correct], { ATTN: path.join(scratch.folder, 'no-attn') })).stderr, /cmake --preset native/);
  });
  test('--list prints every exercise with its Python name and exits 0', async () => {
    const run = await judge(['--list']);
    assert.equal(run.code, 0);
    assert.equal(run.stdout.trim().split('\n').length, catalogue.length);
    assert.match(run.stdout, /^decodeStep {2}\(def decode_step; 3 tests, /m);
  });
});

// ---------------------------------------------------------------- the page's Python signatures

test('the page\'s Python signatures define the function judge.py calls, with the cases\' arguments', () => {
  for (const text of exercises.values()) {
    const match = /^def (\w+)\(([^)]*)\)/.exec(text.python ?? '');
    assert.ok(match, `${text.id}: no Python signature`);
    assert.equal(match[1], snakeCase(text.id), `${text.id}: the Python function's name`);
    const cases = JSON.parse(execFileSync(attn, ['judge', text.id, '--cases'], { encoding: 'utf8' })).cases;
    assert.equal(match[2].split(',').length, cases[0].args.length, `${text.id}: the number of arguments`);
  }
});
