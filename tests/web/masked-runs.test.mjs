// The heatmap hatches masked cells one run at a time (web/src/lib/masked-runs.mjs): the
// runs must cover exactly the cells the mask forbids, each once, and be as long as they
// can be (a run never stops before a forbidden neighbour in its row).
import assert from 'node:assert/strict';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';

const webDir = path.resolve(import.meta.dirname, '..', '..', 'web');
const { maskedRuns } = await import(pathToFileURL(path.join(webDir, 'src', 'lib', 'masked-runs.mjs')).href);

// Every cell the runs cover, checking that none is covered twice and every run is maximal.
function covered(runs, rows, cols, allowed) {
  const seen = Array.from({ length: rows }, () => new Array(cols).fill(false));
  for (const [r, start, end] of runs) {
    assert.ok(r >= 0 && r < rows && start >= 0 && start < end && end <= cols, `run ${[r, start, end]} inside ${rows} x ${cols}`);
    for (let c = start; c < end; c++) {
      assert.ok(!seen[r][c], `cell (${r}, ${c}) in two runs`);
      seen[r][c] = true;
    }
    assert.ok(start === 0 || allowed(r, start - 1), `run ${[r, start, end]} could start earlier`);
    assert.ok(end === cols || allowed(r, end), `run ${[r, start, end]} could end later`);
  }
  return seen;
}

function assertExact(rows, cols, allowed, what) {
  const seen = covered(maskedRuns(rows, cols, allowed), rows, cols, allowed);
  for (let r = 0; r < rows; r++)
    for (let c = 0; c < cols; c++) assert.equal(seen[r][c], !allowed(r, c), `${what}: cell (${r}, ${c})`);
}

test('a causal mask is one run a row: the cells right of the diagonal', () => {
  const T = 32, causal = (r, c) => c <= r;
  const runs = maskedRuns(T, T, causal);
  assert.deepEqual(runs, Array.from({ length: T - 1 }, (_, r) => [r, r + 1, T]));
  assertExact(T, T, causal, 'causal');
});

test('masks with gaps, a history of cached keys and nothing masked', () => {
  assertExact(9, 9, (r, c) => c <= r && c > r - 3, 'sliding window of 3');
  assertExact(4, 10, (r, c) => c <= 6 + r, 'causal over 6 cached keys');
  assertExact(5, 5, () => true, 'nothing masked');
  assert.deepEqual(maskedRuns(5, 5, () => true), []);
  assertExact(3, 4, () => false, 'everything masked');
  assert.deepEqual(maskedRuns(3, 4, () => false), [[0, 0, 4], [1, 0, 4], [2, 0, 4]]);
});

test('random masks: the runs cover exactly the forbidden cells', () => {
  let seed = 7;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  for (let trial = 0; trial < 200; trial++) {
    const rows = 1 + Math.floor(random() * 12), cols = 1 + Math.floor(random() * 12);
    const forbidden = Array.from({ length: rows }, () => Array.from({ length: cols }, () => random() < 0.5));
    assertExact(rows, cols, (r, c) => !forbidden[r][c], `trial ${trial}`);
  }
});
