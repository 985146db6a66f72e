// What both judge tests (solutions.test.mjs for tools/judge.mjs, python_solutions.test.mjs
// for tools/judge.py) do with a judge run as a child process.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Runs `program` with `args` (a judge: its last options may include --json); resolves to
 * {code, stdout, stderr, report (the parsed JSON with --json, else null), ms}.
 */
export function runJudge(program, args, env = process.env) {
  const started = Date.now();
  return new Promise((resolve) => {
    execFile(program, args, { timeout: 60_000, env }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
      let report = null;
      if (args.includes('--json') && stdout.trim()) {
        try {
          report = JSON.parse(stdout);
        } catch {
          // left null: the test's assertion prints stdout
        }
      }
      resolve({ code, stdout, stderr, report, ms: Date.now() - started });
    });
  });
}

/** A folder for files a test writes: {folder, write(name, text) -> the file's path}. */
export function scratchFolder(prefix) {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  process.on('exit', () => fs.rmSync(folder, { recursive: true, force: true })); // the test files' scratch goes with them
  const write = (name, text) => {
    const file = path.join(folder, name);
    fs.writeFileSync(file, text);
    return file;
  };
  return { folder, write };
}

export function describeRun(run) {
  return `exit ${run.code}\nstderr: ${run.stderr.trim()}\nstdout: ${run.stdout.slice(0, 2000)}`;
}
