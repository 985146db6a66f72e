// The page's WebGPU kernels checked against the core: for every case the core names
// (lib/kernel-checks-core.ts), each kernel version that takes its shape runs on the
// device, and the core compares what came back with its reference; each flash run
// also records one head's tiles and one row's running maximum and sum, which the core
// holds to its tile rule and its softmax. The checks themselves are the core's: this
// file only runs kernels and collects the core's records.
import type { CheckRecord } from '../lib/core-types';
import type { DeviceSuiteOptions, KernelCase, KernelChecks } from '../lib/kernel-checks-core';
import { type KernelVersion, kernelVersions, runAttention, type SourceEdit } from './attention-gpu';
import { type Gpu, type GpuOrReason, openDevice } from './gpu-device';

export interface KernelCheckRow {
  version: KernelVersion;
  kernelCase: KernelCase;
  record: CheckRecord;
  /** The run's time on the device, or null when it did not run. */
  ms: number | null;
}

export interface KernelCheckOptions {
  versions?: readonly KernelVersion[];
  /** Case ids; every case when absent. */
  cases?: readonly string[];
  /** Rewrites a kernel's source before it is compiled (the tests' broken kernels). */
  edit?: SourceEdit;
  /** Called with each row as it is known. */
  onRow?: (row: KernelCheckRow) => void;
}

/** Does `version` take this case's shape? v2_decode takes one query (T = 1) only. */
export function versionTakes(version: KernelVersion, kernelCase: KernelCase): boolean {
  return version !== 'v2_decode' || kernelCase.decode;
}

/** Where a flash run's tile record is taken: the last head of the last sequence, a row two thirds down. */
function recordPlace(kernelCase: KernelCase) {
  const { B, Hq, T } = kernelCase.shape;
  return { batch: B - 1, head: Hq - 1, row: Math.floor((2 * (T - 1)) / 3) };
}

/** A run that could not happen (a shape past the adapter's limits, a shader error): a failed record with the reason. */
function notRun(kernelCase: KernelCase, version: KernelVersion, error: unknown): CheckRecord {
  return {
    id: kernelCase.id, name: 'runs', compares: `${version} on ${kernelCase.what}: ${error instanceof Error ? error.message : String(error)}`,
    max_abs_error: Infinity, tolerance: 0, relation: '<=', passed: false,
  };
}

export async function runKernelChecks(gpu: Gpu, checks: KernelChecks, options: KernelCheckOptions = {}): Promise<KernelCheckRow[]> {
  const versions = options.versions ?? kernelVersions;
  const cases = checks.kernelCases().filter((c) => !options.cases || options.cases.includes(c.id));
  const rows: KernelCheckRow[] = [];
  const add = (row: KernelCheckRow) => {
    rows.push(row);
    options.onRow?.(row);
  };
  for (const kernelCase of cases) {
    const inputs = checks.kernelInputs(kernelCase.id);
    for (const version of versions.filter((v) => versionTakes(v, kernelCase))) {
      const place = version === 'v1_flash' && kernelCase.blind_row < 0 ? recordPlace(kernelCase) : undefined;
      let run;
      try {
        run = await runAttention(gpu, version, kernelCase.shape, inputs, { record: place, edit: options.edit });
      } catch (error) {
        add({ version, kernelCase, record: notRun(kernelCase, version, error), ms: null });
        continue;
      }
      const records = checks.checkKernelOutput(kernelCase.id, version, run.out, run.probs);
      if (place && run.record)
        records.push(...checks.checkTileRecord(kernelCase.id, { tile_q: run.tiles.rows, tile_k: run.tiles.keys, ...place },
          run.record.states, run.record.trace));
      for (const record of records) add({ version, kernelCase, record, ms: run.ms });
    }
  }
  return rows;
}

export interface SuiteResult {
  checks: CheckRecord[];
  /** Rounds of the suite, and the attentions the device computed for it. */
  rounds: number;
  attentions: number;
}

/**
 * attn verify's check suite on the tiny model with every attention computed on the device:
 * v0_eager for a pass of several tokens (its probabilities feed the checks), v2_decode for a
 * single token. The core runs the suite in rounds and asks for the attentions it has no
 * answer to; the device answers them; a model of L layers completes in L + 1 rounds.
 */
export async function runSuiteOnDevice(gpu: Gpu, checks: KernelChecks,
  options: DeviceSuiteOptions & { edit?: SourceEdit } = {}): Promise<SuiteResult> {
  const suite = checks.deviceSuite({ sinks: options.sinks ?? false });
  try {
    let attentions = 0;
    for (let rounds = 1; rounds <= 16; rounds++) {
      const round = suite.run();
      if (round.complete) return { checks: round.checks, rounds, attentions };
      for (let i = 0; i < round.requests; i++) {
        const request = suite.request(i);
        const version: KernelVersion = request.shape.T === 1 ? 'v2_decode' : 'v0_eager';
        const run = await runAttention(gpu, version, request.shape, request, { edit: options.edit });
        suite.answer(request.key, run.out, run.probs);
        attentions += 1;
      }
    }
    throw new Error('the check suite asked for attentions round after round without completing');
  } finally {
    suite.delete();
  }
}

/**
 * The verdict on a device (gpu-session.ts):
 *   none     no adapter (or no WebGPU): the reason, in one sentence
 *   failed   the device computes some case differently from the core: its rows
 *   passed   every check passed: the device, the core's checks module and the rows
 */
export type GpuVerdict =
  | { kind: 'none'; reason: string }
  | { kind: 'failed'; gpu: Gpu; checks: KernelChecks; rows: KernelCheckRow[]; failed: number; ms: number }
  | { kind: 'passed'; gpu: Gpu; checks: KernelChecks; rows: KernelCheckRow[]; ms: number };

export interface GpuSession {
  /** The device, once granted (before its checks end), or why there is none. */
  opened: Promise<GpuOrReason>;
  verdict: Promise<GpuVerdict>;
  /** Calls `onRow` with every check row so far, then with each as it comes. */
  watch(onRow: (row: KernelCheckRow) => void): void;
}

/** Opens a device on `adapter` and runs every kernel check on it: the session of a page that was granted one. */
export function checkDevice(adapter: GPUAdapter): GpuSession {
  const started = performance.now();
  const rows: KernelCheckRow[] = [];
  const watchers: ((row: KernelCheckRow) => void)[] = [];
  const opened = openDevice(adapter);
  const verdict = (async (): Promise<GpuVerdict> => {
    const got = await opened;
    if ('unavailable' in got) return { kind: 'none', reason: got.unavailable };
    const checks = await (await import('../lib/kernel-checks-core')).loadKernelChecks();
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
  return {
    opened,
    verdict,
    watch: (onRow) => {
      for (const row of rows) onRow(row);
      watchers.push(onRow);
    },
  };
}
