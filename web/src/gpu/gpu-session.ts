// The notebook's GPU, checked once for every figure that uses it: the browser is asked
// for a WebGPU device; where one is granted, the kernels' checks (kernel-checks.ts) run
// on it before any figure believes it. The figures wait for the verdict:
//   none     no adapter (or no WebGPU): the reason, in one sentence
//   failed   the device computes some case differently from the core: its rows
//   passed   every check passed: the device, the core's checks module and the rows
// Only gpu-device.ts is in this file's chunk: the kernels and the core's checks module
// load once a device is granted, so a page without one fetches neither.
import type { CheckRecord } from '../lib/core-types';
import type { KernelChecks } from '../lib/kernel-checks-core';
import { type Gpu, openGpu } from './gpu-device';
import type { KernelCheckRow } from './kernel-checks';

export type GpuVerdict =
  | { kind: 'none'; reason: string }
  | { kind: 'failed'; gpu: Gpu; checks: KernelChecks; rows: KernelCheckRow[]; failed: number; ms: number }
  | { kind: 'passed'; gpu: Gpu; checks: KernelChecks; rows: KernelCheckRow[]; ms: number };

export interface GpuSession {
  /** The device, once granted (before its checks end); null without one. */
  opened: Promise<{ gpu: Gpu } | { unavailable: string }>;
  verdict: Promise<GpuVerdict>;
  /** Calls `onRow` with every check row so far, then with each as it comes. */
  watch(onRow: (row: KernelCheckRow) => void): void;
}

let session: GpuSession | null = null;

/** The one session of the page: the first call opens the device and starts the checks. */
export function gpuSession(): GpuSession {
  if (session) return session;
  const rows: KernelCheckRow[] = [];
  const watchers: ((row: KernelCheckRow) => void)[] = [];
  const opened = openGpu();
  const verdict = (async (): Promise<GpuVerdict> => {
    const started = performance.now();
    const got = await opened;
    if ('unavailable' in got) return { kind: 'none', reason: got.unavailable };
    const [{ loadKernelChecks }, { runKernelChecks }] = await Promise.all([
      import('../lib/kernel-checks-core'), import('./kernel-checks'),
    ]);
    const checks = await loadKernelChecks();
    await runKernelChecks(got.gpu, checks, {
      onRow: (row) => {
        rows.push(row);
        for (const watcher of watchers) watcher(row);
      },
    });
    const ms = performance.now() - started;
    const failed = rows.filter((r) => !r.record.passed).length;
    return failed === 0
      ? { kind: 'passed', gpu: got.gpu, checks, rows, ms }
      : { kind: 'failed', gpu: got.gpu, checks, rows, failed, ms };
  })();
  session = {
    opened,
    verdict,
    watch: (onRow) => {
      for (const row of rows) onRow(row);
      watchers.push(onRow);
    },
  };
  return session;
}

/** "max |error| 1.2e-7 ≤ 2.4e-7" for a record, as the checks' table prints it. */
export function recordNumber(x: number | null): string {
  return x === null ? 'inf' : Number.isFinite(x) ? x.toExponential(3) : String(x);
}

/** A record's row of the CLI's table: kernel, case, check, max |error|, tolerance, PASS or FAIL. */
export function recordCells(record: CheckRecord, first: string[]): string[] {
  return [...first, record.name, recordNumber(record.max_abs_error), `${record.relation} ${recordNumber(record.tolerance)}`,
    record.passed ? 'PASS' : 'FAIL'];
}
