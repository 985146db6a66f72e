#!/usr/bin/env node
// The CPU attention benchmark in the wasm build under Node, side by side with
// the native build: the same harness (core/bench), kernels, validation and cases.
//
//   node tools/bench-wasm.mjs [--native REPORT.json] [--portable REPORT.json] [--attn PATH]
//                             [--quick] [--prefill 128,512] [--decode 512] [--json] [--out FILE]
//
// The native numbers come from REPORT.json (what `attn bench cpu --out` or
// `--json` wrote; its cases and timing policy are reused), or else from running
// `attn bench cpu --json --no-peers` with the same cases (--attn, default
// build/bench/native/attn, then build/native/native/attn). The wasm comes from
// build/wasm/wasm or $ANATOMY_WASM_DIR. Prints per row the wasm and native
// medians and wasm / native (1.0 = as fast as native; the target is <= 2).
// --portable adds a second native report, from a build whose kernels were compiled
// without -march=native (ANATOMY_KERNEL_FLAGS=""): SSE2 without fused multiply-add,
// the same 128-bit vectors wasm has, so wasm / portable isolates the wasm overhead.
// Each report also times its build's arithmetic ceiling (multiply-adds on
// register-resident vectors: 16-lane fused with AVX-512, 4-lane multiply then
// add in wasm-simd128), and each kernel's GFLOP/s as a share of its own build's
// ceiling: the ceilings' ratio bounds how close wasm / native can get.
// Exit status 0, 1 when a wasm kernel failed validation, 2 for a usage error.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { loadBench, wasmDir } from '../wasm/load-node.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const usage = 'usage: node tools/bench-wasm.mjs [--native REPORT.json] [--portable REPORT.json] [--attn PATH] [--quick] ' +
  '[--prefill T,...] [--decode S,...] [--json] [--out FILE]';

function fail(message) {
  console.error(`bench-wasm: ${message}`);
  process.exit(2);
}

function parseArgs(argv) {
  const args = { quick: false, json: false };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = () => (i + 1 < argv.length ? argv[++i] : fail(`${flag} needs a value\n${usage}`));
    if (flag === '--quick') args.quick = true;
    else if (flag === '--json') args.json = true;
    else if (flag === '--native') args.native = value();
    else if (flag === '--portable') args.portable = value();
    else if (flag === '--attn') args.attn = value();
    else if (flag === '--out') args.out = value();
    else if (flag === '--prefill' || flag === '--decode') {
      const sizes = value().split(',').map(Number);
      if (!sizes.every((n) => Number.isInteger(n) && n > 0)) fail(`${flag} takes positive whole numbers`);
      args[flag.slice(2)] = sizes;
    } else fail(`unknown argument '${flag}'\n${usage}`);
  }
  return args;
}

// The options that make the wasm run the native report's cases with its policy.
function optionsFromReport(report) {
  const rows = report.rows.filter((r) => ['grouped', 'streaming', 'rows', 'steps', 'reference'].includes(r.kernel));
  const unique = (xs) => [...new Set(xs)];
  return {
    batch: report.shape.B, heads: report.shape.Hq, kv_heads: report.shape.Hkv, head_dim: report.shape.dh,
    prefill_T: unique(rows.filter((r) => r.case === 'prefill').map((r) => r.T)),
    decode_S: unique(rows.filter((r) => r.case === 'decode').map((r) => r.S)),
    kernels: report.kernels.map((k) => k.name),
    warmup: report.policy.warmup, min_runs: report.policy.min_runs, max_runs: report.policy.max_runs,
    budget_ms: report.policy.budget_ms,
    // The wasm32 heap stops at 2 GB; the reference and v4 hold 3 x [B, Hq, T, S] floats (1.6 GB at T = 2048).
    reference_max_T: Math.min(report.policy.reference_max_T, 1024),
  };
}

function readReport(file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    return fail(`cannot read the native report ${file}: ${e.message}`);
  }
}

function nativeReport(args) {
  if (args.native) return readReport(args.native);
  const candidates = args.attn ? [args.attn] : [path.join(repo, 'build/bench/native/attn'), path.join(repo, 'build/native/native/attn')];
  const attn = candidates.find((p) => fs.existsSync(p));
  if (!attn) fail(`no native attn at ${candidates.join(' or ')}: build the native preset or pass --native REPORT.json`);
  const cli = ['bench', 'cpu', '--json', '--no-peers'];
  if (args.quick) cli.push('--quick');
  if (args.prefill) cli.push('--prefill', args.prefill.join(','));
  if (args.decode) cli.push('--decode', args.decode.join(','));
  console.error(`bench-wasm: running ${attn} ${cli.join(' ')}`);
  const run = spawnSync(attn, cli, { encoding: 'utf8', maxBuffer: 1 << 26, stdio: ['ignore', 'pipe', 'inherit'] });
  if (run.status !== 0) fail(`native bench failed with status ${run.status}`);
  return JSON.parse(run.stdout);
}

function msText(ms) {
  return ms === undefined ? '' : ms < 1 ? ms.toFixed(4) : ms < 100 ? ms.toFixed(2) : ms.toFixed(0);
}

const args = parseArgs(process.argv.slice(2));
const native = nativeReport(args);
const options = optionsFromReport(native);
let core;
try {
  core = await loadBench(wasmDir);
} catch (e) {
  fail(e.message);
}
// V8 first compiles wasm with its baseline tier and optimises hot functions in the
// background; a throw-away quick run lets every kernel reach the optimised tier
// before the first timed case (without it the first case ran up to 2x slower).
JSON.parse(core.benchCpu(JSON.stringify({ quick: true, model: false, max_runs: 5, min_runs: 5 })));
console.error(`bench-wasm: running benchCpu in ${wasmDir} with ${JSON.stringify(options)}`);
const wasm = JSON.parse(core.benchCpu(JSON.stringify(options)));
if (wasm.error) fail(`benchCpu: ${wasm.error}`);

const key = (r) => `${r.case}|${r.T}|${r.S}|${r.kernel}`;
const nativeByKey = new Map(native.rows.map((r) => [key(r), r]));
const portable = args.portable ? readReport(args.portable) : undefined;
const portableByKey = new Map((portable?.rows ?? []).map((r) => [key(r), r]));
const rows = wasm.rows.map((w) => {
  const n = nativeByKey.get(key(w));
  const row = { case: w.case, T: w.T, S: w.S, kernel: w.kernel, wasm_ms: w.ms, native_ms: n?.ms,
    wasm_gflops: w.gflops, native_gflops: n?.gflops, validated: w.validation ? w.validation.passed : undefined };
  if (w.skipped) row.skipped = w.skipped;
  if (row.wasm_ms !== undefined && row.native_ms !== undefined) row.wasm_over_native = row.wasm_ms / row.native_ms;
  // The ceiling runs as many rounds in both builds, but a native round is 16 lanes wide and a
  // wasm round 4: its ratio is the time for the same work, native GFLOP/s over wasm GFLOP/s.
  if (w.case === 'ceiling' && w.gflops && n?.gflops) row.wasm_over_native = n.gflops / w.gflops;
  const p = portableByKey.get(key(w));
  if (p?.ms !== undefined) {
    row.portable_ms = p.ms;
    if (row.wasm_ms !== undefined) row.wasm_over_portable = row.wasm_ms / p.ms;
    if (w.case === 'ceiling' && w.gflops && p.gflops) row.wasm_over_portable = p.gflops / w.gflops;
  }
  return row;
});
const result = {
  bench: 'attention-cpu-wasm', node: process.version, wasm_build: wasm.build, wasm_kernel_isa: wasm.kernel_isa,
  native_build: native.build, native_kernel_isa: native.kernel_isa, portable_kernel_isa: portable?.kernel_isa,
  shape: wasm.shape, policy: wasm.policy, rows,
};
if (args.out) fs.writeFileSync(args.out, `${JSON.stringify(result, null, 1)}\n`);

if (args.json) {
  console.log(JSON.stringify(result, null, 1));
} else {
  const s = wasm.shape;
  console.log(`bench-wasm: Node ${process.version}, wasm ${wasm.build.compiler} (${wasm.kernel_isa}) vs native ` +
    `${native.build.compiler} (${native.kernel_isa}), 1 thread, B=${s.B} Hq=${s.Hq} Hkv=${s.Hkv} dh=${s.dh}, causal`);
  console.log('every wasm kernel validated against the fp64 reference before timing (same rule as native)\n');
  const pad = (x, n) => String(x).padStart(n);
  const ceiling = rows.find((r) => r.case === 'ceiling');
  const share = (gflops, whole) => (gflops === undefined || !whole ? '' : `${Math.round((100 * gflops) / whole)}%`);
  const extra = portable ? `${pad(`portable ms`, 13)}${pad('wasm/portable', 15)}` : '';
  if (portable) console.log(`portable: native ${portable.build.compiler} with kernels for ${portable.kernel_isa}`);
  console.log(`${'case'.padEnd(10)}${pad('T', 5)}${pad('S', 7)}  ${'kernel'.padEnd(18)}${pad('wasm ms', 11)}${pad('native ms', 11)}` +
    `${pad('wasm/native', 13)}${pad('wasm ceil%', 12)}${pad('native ceil%', 14)}${extra}`);
  const ratioText = (x, skipped) => (x === undefined ? (skipped ? 'skip' : '') : `${x.toFixed(2)}x`);
  for (const r of rows) {
    const more = portable ? `${pad(msText(r.portable_ms), 13)}${pad(ratioText(r.wasm_over_portable, r.skipped), 15)}` : '';
    console.log(`${r.case.padEnd(10)}${pad(r.T, 5)}${pad(r.S, 7)}  ${r.kernel.padEnd(18)}${pad(msText(r.wasm_ms), 11)}` +
      `${pad(msText(r.native_ms), 11)}${pad(ratioText(r.wasm_over_native, r.skipped), 13)}` +
      `${pad(share(r.wasm_gflops, ceiling?.wasm_gflops), 12)}${pad(share(r.native_gflops, ceiling?.native_gflops), 14)}${more}` +
      `${r.validated === false ? '  FAILED validation' : ''}`);
  }
  if (ceiling?.wasm_gflops && ceiling?.native_gflops) {
    console.log(`\nceiling (multiply-adds on registers): wasm ${ceiling.wasm_gflops.toFixed(1)} GFLOP/s, native ` +
      `${ceiling.native_gflops.toFixed(1)} GFLOP/s: a compute-bound kernel equally efficient in both builds runs ` +
      `${(ceiling.native_gflops / ceiling.wasm_gflops).toFixed(1)}x slower in wasm`);
  }
}
process.exit(rows.some((r) => r.validated === false) ? 1 : 0);
