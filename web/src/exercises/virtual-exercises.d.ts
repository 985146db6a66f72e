// The module the exercise-texts plugin in web/vite.config.ts generates at build time from
// the exercise folders (exercises/NN-<id>/, read by exercises/read.mjs): one entry per
// exercise of the judge (core/judge/exercises.cpp), with the same ids in the same order.
// The judge owns the test cases and the named mistakes; the folders own the words.
declare module 'virtual:exercises' {
  export interface Parameter {
    name: string;
    /** Shape or type, e.g. "[B, H, T, D]" or "boolean". */
    type: string;
    note?: string;
  }

  export interface ExerciseText {
    /** The judge's id, which is also the name of the function the learner writes. */
    id: string;
    title: string;
    /** HTML: a few short paragraphs in our own words (statement.html). */
    statement: string;
    parameters: Parameter[];
    returns: Parameter;
    /** The function's Python (NumPy) signature, judged by tools/judge.py: snake_case names, shapes in a comment. */
    python: string;
    /** What the editor starts with: the signature, shapes in comments, a stub (starter.js). */
    starter: string;
    /** HTML, opened one at a time on request. */
    hints: string[];
    /** Shown once the learner has passed every test (solution.js). */
    solution: string;
  }

  export const exerciseTexts: ExerciseText[];
}
