// The source reader's markers against the C++ core, with plain node.
//
// 1. Reads core/*.{cpp,hpp} and core/ops/*.{cpp,hpp} and checks every
//    `// [anatomy:id]` ... `// [/anatomy:id]` pair against web/src/source/sections.mjs:
//    no marker missing, unpaired, malformed or duplicated, every section in the file
//    the table names, every piece of code the table requires inside its range, every
//    key-line note of the widget pointing at a line inside its view, and every
//    function a section defines with its shape contract in the header next to it
//    (attention_scores's must read as core/ops/attention.hpp writes it).
// 2. Checks the checker: the same sources with one marker removed, moved off its
//    code, duplicated, unclosed or misspelt, or with a shape contract removed from
//    a header, must each be reported.
// Uses the same module as the Vite plugin (web/src/source/markers.mjs), so the build
// and this test cannot disagree. Exit status 0 when everything holds, 1 otherwise.
import { readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..');
const { checkSources, describeErrors, loadAnatomySource } = await import(join(repo, 'web/src/source/markers.mjs'));
const { OPERATIONS, SECTIONS } = await import(join(repo, 'web/src/source/sections.mjs'));

let failed = false;      // the real core breaks a rule
let checkerFailed = false;  // the checker missed a planted mistake

// --- 1. the real core ---
const real = loadAnatomySource(repo, SECTIONS, OPERATIONS);
if (real.errors.length > 0) {
  console.error(describeErrors(real.errors));
  failed = true;
} else {
  const rows = Object.entries(real.sections).sort(([, a], [, b]) => a.file.localeCompare(b.file) || a.startLine - b.startLine);
  const width = Math.max(...rows.map(([, r]) => r.file.length));
  for (const [id, r] of rows) console.log(`  ${r.file.padEnd(width)}  ${`${r.startLine}-${r.endLine}`.padStart(7)}  ${id}`);
  const notes = OPERATIONS.reduce((n, op) => n + op.views.reduce((m, v) => m + v.notes.length, 0), 0);
  console.log(
    `ok: ${rows.length} sections in ${Object.keys(real.files).length} files (of ${real.scanned.length} scanned), ` +
      `${OPERATIONS.length} operations, ${notes} key-line notes, every one inside its range`,
  );
  const contracts = Object.values(real.contracts).flat();
  const expected = 'q: [B, Hq, T, dh], k: [B, Hkv, S, dh] -> [B, Hq, T, S]';
  const scores = real.contracts.attention_scores?.find((c) => c.name === 'attention_scores');
  if (scores?.shapes.join(' | ') !== expected) {
    console.error(`attention_scores's shape contract should read "${expected}", got ${JSON.stringify(scores?.shapes ?? null)}`);
    failed = true;
  } else console.log(`ok: ${contracts.length} shape contracts found in the headers, e.g. attention_scores  ${expected}`);
}

// --- 2. the checker catches each kind of mistake ---
const sources = {};
for (const path of real.scanned) sources[relative(repo, path).split('\\').join('/')] = readFileSync(path, 'utf8');
const file = SECTIONS.rms_norm.file;
const open = '// [anatomy:rms_norm]';
const close = '// [/anatomy:rms_norm]';
/** Each case: a change to rms_norm's file (or to the file named last), and a piece of the message that must report it. */
const cases = [
  ['opening marker removed', (t) => t.replace(`${open}\n`, ''), 'closes a section that was never opened'],
  ['closing marker removed', (t) => t.replace(`${close}\n`, ''), 'is never closed'],
  ['both markers removed', (t) => t.replace(`${open}\n`, '').replace(`${close}\n`, ''), 'section rms_norm: no markers found'],
  ['section moved off its code', (t) => t.replace(`${open}\n`, '').replace(`${close}\n`, '') + `\n${open}\nint unrelated;\n${close}\n`, 'must contain "Tensor3<Real> rms_norm("'],
  ['closing marker moved up', (t) => t.replace(`${close}\n`, '').replace('        Real sum_sq = 0;\n', `${close}\n        Real sum_sq = 0;\n`), 'must contain "std::sqrt"'],
  ['section duplicated', (t) => `${t}\n${open}\nstd::sqrt(0);\n${close}\n`, 'is marked 2 times'],
  ['opened twice', (t) => t.replace(open, `${open}\n${open}`), 'opened again before'],
  ['misspelt marker', (t) => t.replace(open, '// [anatomy: rms_norm]'), 'malformed marker'],
  ['marker after code on a line', (t) => t.replace(open, `int x;  ${open}`), 'malformed marker'],
  ['empty section', (t) => t.replace(open, `${open}\n${close}\n${open}`), 'is empty'],
  ['unknown section id', (t) => `${t}\n// [anatomy:no_such_op]\nint y;\n// [/anatomy:no_such_op]\n`, 'section no_such_op is not in'],
  ['shape contract removed from a header', (t) => t.replace('//   q: [B, Hq, T, dh], k: [B, Hkv, S, dh]  ->  [B, Hq, T, S]\n', ''),
    'attention_scores (defined in section attention_scores) has no shape contract', 'core/ops/attention.hpp'],
  ['declaration comment gone', (t) => t.replace(/(\/\/[^\n]*\n)+(template <typename Real>\nTensor3<Real> rms_norm\()/, '$2'),
    'rms_norm (defined in section rms_norm) has no shape contract', 'core/ops/rms_norm.hpp'],
  ['an exempt function gains a contract', (t) => t.replace('template <typename Real>\nTensor3<Real> silu(', '//   a: [B, T, F]  ->  [B, T, F]\ntemplate <typename Real>\nTensor3<Real> silu('),
    'silu has a shape contract now', 'core/ops/swiglu.hpp'],
];
for (const [name, change, expected, target = file] of cases) {
  if (change(sources[target]) === sources[target]) {
    checkerFailed = true;
    console.error(`checker self-test FAILED: "${name}" changed nothing in ${target}; update the case`);
    continue;
  }
  const broken = { ...sources, [target]: change(sources[target]) };
  const { errors } = checkSources(broken, SECTIONS, OPERATIONS);
  const caught = errors.some((e) => e.includes(expected));
  if (!caught) {
    checkerFailed = true;
    console.error(`checker self-test FAILED: "${name}" should report "${expected}", got:\n  ${errors.join('\n  ') || '(no error)'}`);
  }
}
if (!checkerFailed) console.log(`ok: the checker reports all ${cases.length} kinds of broken marker it is shown`);
process.exit(failed || checkerFailed ? 1 : 0);
