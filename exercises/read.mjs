// The exercises, read from their folders: one folder per exercise, named NN-<id>, where
// <id> is the judge's id (core/judge/exercises.cpp), which is also the name of the
// function the learner writes, and NN its place in the page's list (the judge's order).
// A folder holds:
//
//   exercise.json   title, parameters, returns, the Python signature (a list of lines), hints (HTML)
//   statement.html  the statement, a few short paragraphs
//   starter.js      what the editor starts with: the signature, shapes in comments, a stub
//   solution.js     the reference solution, shown once every test passes
//   solution.py     the same function in NumPy, for tools/judge.py
//   solution_*.py   other correct Python solutions (solution_torch.py: PyTorch)
//   mistakes.json   every named mistake of the judge as edits of solution.js and of
//                   solution.py: {"mistake": id, "note", "edits": [{"replace", "with"}]},
//                   each "replace" found exactly once in the text the edits before it left;
//                   {"partial": name, ...} is code that only some failing cases show as a mistake
//
// The page's build (web/vite.config.ts, `virtual:exercises`) and the tests
// (tests/exercises/, tests/browser/) read the exercises through this module.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const exercisesDir = path.dirname(fileURLToPath(import.meta.url));

const folderName = /^(\d+)-(\w+)$/;

/** Every exercise folder under `root`, in the page's order. */
export function readExercises(root = exercisesDir) {
  return fs.readdirSync(root, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && folderName.test(entry.name))
    .sort((a, b) => Number(folderName.exec(a.name)[1]) - Number(folderName.exec(b.name)[1]))
    .map((entry) => readExercise(path.join(root, entry.name)));
}

function readExercise(folder) {
  const read = (file) => fs.readFileSync(path.join(folder, file), 'utf8');
  const meta = JSON.parse(read('exercise.json'));
  const mistakes = JSON.parse(read('mistakes.json'));
  return {
    id: folderName.exec(path.basename(folder))[2],
    folder,
    title: meta.title,
    statement: read('statement.html'),
    parameters: meta.parameters,
    returns: meta.returns,
    python: meta.python.join('\n'),
    hints: meta.hints,
    starter: read('starter.js'),
    solution: read('solution.js'),
    solutionPython: read('solution.py'),
    /** Other correct Python solutions: name (solution_torch) -> path. */
    otherPython: Object.fromEntries(fs.readdirSync(folder).filter((f) => /^solution_\w+\.py$/.test(f)).map((f) => [f.slice(0, -3), path.join(folder, f)])),
    /** file ('solution.js', 'solution.py') -> its mistakes and partial mistakes, as edits. */
    mistakes,
  };
}

/** What the page shows of an exercise (web/src/exercises/virtual-exercises.d.ts). */
export function pageText(exercise) {
  const { id, title, statement, parameters, returns, python, starter, hints, solution } = exercise;
  return { id, title, statement, parameters, returns, python, starter, hints, solution };
}

/** `source` with each edit applied in turn; an edit whose text is not found exactly once is an error. */
export function applyEdits(source, edits, label) {
  return edits.reduce((text, { replace, with: replacement }, i) => {
    const found = text.split(replace).length - 1;
    if (found !== 1) throw new Error(`${label}: edit ${i + 1} finds ${JSON.stringify(replace)} ${found} times, not once`);
    return text.replace(replace, () => replacement);
  }, source);
}

/**
 * A mistake's code: the solution in `file` ('solution.js' or 'solution.py') with the
 * mistake's edits applied, under a comment naming the mistake. `name` is a mistake's id
 * or a partial mistake's name.
 */
export function mistakeSource(exercise, name, file = 'solution.js') {
  const entry = (exercise.mistakes[file] ?? []).find((m) => (m.mistake ?? m.partial) === name);
  if (!entry) throw new Error(`${exercise.id}: ${file} has no mistake ${name}`);
  const solution = file === 'solution.py' ? exercise.solutionPython : exercise.solution;
  const comment = file.endsWith('.py') ? '#' : '//';
  return `${comment} The mistake under test (${name}): ${entry.note}\n${applyEdits(solution, entry.edits, `${exercise.id}/${file} ${name}`)}`;
}
