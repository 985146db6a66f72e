// The WebGPU kernels against onnxruntime-web's WebGPU execution provider, in one run of
// one Chromium on one adapter, on TinyLlama's attention (32 query heads, 4 KV heads, head
// size 64, one sequence, causal, f32):
//
//   node web/bench/webgpu-attention.mjs [--tokens 1024,4096] [--decode 1024,4096] [--runs 5] [--json]
//                                       [--heads 32 --kv-heads 4 --head-size 64]
//
// Prefill at each T: our v0_eager and v1_flash, the wasm core's grouped kernel on the CPU
// (in Node, one thread: the kernel's time alone), and two onnxruntime-web graphs written by
// web/bench/attention_onnx.py (python3-onnx: scripts/install-deps.sh bench): the attention
// as plain operators (MatMul, Softmax, MatMul: "ort_unfused") and onnxruntime's fused
// GroupQueryAttention operator ("ort_gqa"). Decode at each S: our v2_decode and v1_flash
// with one query. Each time is the median of --runs calls after one warm-up, from the
// inputs in JavaScript arrays to the output back in one, for every engine alike (ours
// upload, dispatch and read back; onnxruntime's session.run does the same). Before
// anything is timed the page's own checks must pass on the adapter (gpu.html), and every
// output is compared with our v1_flash's: onnxruntime's error is printed beside its time,
// and a time whose output is wrong by more than 1e-4 (both compute in f32, in different
// orders; |out| <= max |v| ~ 4, so about 30 ulps) is marked WRONG, its ratio a ratio to a
// wrong result. On SwiftShader (the default here: Chromium's software adapter) the times
// are a CPU's and only the ratios between engines on the same adapter mean something; on
// a machine with a GPU, run it with ANATOMY_WEBGPU_ADAPTER=hardware (Chromium then picks
// the machine's GPU) or open gpu.html in a browser.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import { openPage, startSite, webgpuArgs } from '../../tests/browser/harness.mjs';
import { loadBench } from '../../wasm/load-node.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const web = path.resolve(here, '..');
const usage = 'usage: node web/bench/webgpu-attention.mjs [--tokens 1024,4096] [--decode 1024,4096] [--runs 5] [--json] [--heads 32 --kv-heads 4 --head-size 64]';

function fail(message) {
  console.error(`webgpu-attention: ${message}\n${usage}`);
  process.exit(2);
}

function parseArgs(argv) {
  const options = { tokens: [1024, 4096], decode: [1024, 4096], runs: 5, json: false, heads: 32, kvHeads: 4, headSize: 64 };
  let i = 0;
  const whole = (arg, key, most) => {
    options[key] = Number(argv[++i]);
    if (!Number.isInteger(options[key]) || options[key] < 1 || options[key] > most) fail(`${arg} takes a whole number from 1 to ${most} (got ${argv[i]})`);
  };
  for (; i < argv.length; i++) {
    const arg = argv[i];
    const list = () => {
      const value = argv[++i];
      const sizes = (value ?? '').split(',').map(Number);
      if (!value || sizes.some((n) => !Number.isInteger(n) || n < 1 || n > 65536)) fail(`${arg} takes sizes from 1 to 65536, comma-separated (got ${value})`);
      return sizes;
    };
    if (arg === '--tokens') options.tokens = list();
    else if (arg === '--decode') options.decode = list();
    else if (arg === '--runs') {
      options.runs = Number(argv[++i]);
      if (!Number.isInteger(options.runs) || options.runs < 1 || options.runs > 100) fail(`--runs takes a whole number from 1 to 100 (got ${argv[i]})`);
    } else if (arg === '--heads') whole(arg, 'heads', 256);
    else if (arg === '--kv-heads') whole(arg, 'kvHeads', 256);
    else if (arg === '--head-size') whole(arg, 'headSize', 128);
    else if (arg === '--json') options.json = true;
    else fail(`unknown option ${arg}`);
  }
  if (options.heads % options.kvHeads !== 0) fail(`--kv-heads ${options.kvHeads} does not divide --heads ${options.heads}`);
  return options;
}

const options = parseArgs(process.argv.slice(2));
const shape = { B: 1, Hq: options.heads, Hkv: options.kvHeads, D: options.headSize };
const dist = path.join(web, 'dist');
if (!fs.existsSync(path.join(dist, 'gpu.html'))) fail('web/dist/gpu.html is missing: build the page first (scripts/build-web.sh)');
const ortDist = path.join(web, 'node_modules', 'onnxruntime-web', 'dist');
if (!fs.existsSync(path.join(ortDist, 'ort.webgpu.min.mjs'))) fail('onnxruntime-web is missing: run scripts/install-deps.sh npm');

// The site, onnxruntime-web's files and the graphs, served from one folder of links.
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'webgpu-attention-'));
for (const entry of fs.readdirSync(dist)) fs.symlinkSync(path.join(dist, entry), path.join(root, entry));
fs.symlinkSync(ortDist, path.join(root, 'ort'));
let graphs = true;
const python = fs.existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
for (const T of options.tokens) {
  try {
    execFileSync(python, [path.join(here, 'attention_onnx.py'), '--out', path.join(root, 'onnx', String(T)),
      '--heads', String(shape.Hq), '--kv-heads', String(shape.Hkv), '--head-size', String(shape.D), '--tokens', String(T)], { stdio: 'pipe' });
  } catch (error) {
    graphs = false;
    console.error(`webgpu-attention: onnxruntime's graphs SKIPPED: ${String(error.stderr || error.message).trim().split('\n').pop()} ` +
      '(python3-onnx writes them: scripts/install-deps.sh bench)');
    break;
  }
}

const args = process.env.ANATOMY_WEBGPU_ADAPTER === 'hardware' ? ['--enable-unsafe-webgpu'] : webgpuArgs;
const site = await startSite({ root, args, cacheAssets: false });
const { page, close } = await openPage(site.browser, site.url('gpu.html'), { fresh: true });
const checked = await page.waitForFunction(() => {
  const summary = document.querySelector('#gpu-summary')?.textContent ?? '';
  const adapter = document.querySelector('#gpu-adapter');
  if (adapter?.dataset.adapter === 'none') return { adapter: null, summary: adapter.textContent };
  return /passed|FAILED/.test(summary) ? { adapter: adapter.textContent, summary, failed: Number(document.querySelector('#gpu-summary').dataset.failed) } : null;
}, null, { timeout: 300_000 }).then((handle) => handle.jsonValue());
if (!checked.adapter) {
  console.log(`webgpu-attention: SKIPPED: ${checked.summary}`);
  await close();
  await site.close();
  fs.rmSync(root, { recursive: true, force: true });
  process.exit(0);
}
if (checked.failed > 0) fail(`the kernels fail their checks on this adapter (${checked.summary}): nothing is timed`);

const results = await page.evaluate(async ({ shape, tokens, decode, runs, graphs }) => {
  const hook = window.attentionAnatomyGpu;
  // Seeded N(0, 1) inputs (mulberry32, Box-Muller): the same for every engine.
  let state = 12345;
  const uniform = () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const normals = (n) => Float32Array.from({ length: n }, () => Math.sqrt(-2 * Math.log(1 - uniform())) * Math.cos(2 * Math.PI * uniform()));
  const tolerance = 1e-4;
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const timed = async (call) => {
    let out = await call();   // warm-up: compiles, allocates
    const ms = [];
    for (let i = 0; i < runs; i++) {
      const started = performance.now();
      out = await call();
      ms.push(performance.now() - started);
    }
    return { ms: median(ms), out };
  };
  const maxDiff = (a, b) => {
    if (a.length !== b.length) return Infinity;
    let worst = 0;
    for (let i = 0; i < a.length; i++) {
      const d = Math.abs(a[i] - b[i]);
      if (!(d <= worst)) worst = Number.isNaN(d) ? Infinity : d;
    }
    return worst;
  };
  // The query rows (of T, any head) where a [1, H, T, D] output is off by more than the tolerance.
  const wrongRows = (a, b, T, D) => {
    const rows = new Set();
    for (let i = 0; i < a.length; i++) if (!(Math.abs(a[i] - b[i]) <= tolerance)) rows.add(Math.floor(i / D) % T);
    return [...rows].sort((x, y) => x - y);
  };
  // [1, H, T, D] -> [1, T, H * D]
  const tokensMajor = (x, H, T, D) => {
    const y = new Float32Array(x.length);
    for (let h = 0; h < H; h++) for (let t = 0; t < T; t++) y.set(x.subarray((h * T + t) * D, (h * T + t + 1) * D), (t * H + h) * D);
    return y;
  };
  let ort = null;
  if (graphs) {
    ort = await import('/ort/ort.webgpu.min.mjs');
    ort.env.wasm.wasmPaths = '/ort/';
    ort.env.wasm.numThreads = 1;
  }
  const rows = [];
  for (const T of tokens) {
    const s = { ...shape, T, S: T };
    const inputs = { q: normals(s.Hq * T * s.D), k: normals(s.Hkv * T * s.D), v: normals(s.Hkv * T * s.D), sinks: null, ranges: hook.ranges({ kind: 'causal', T, S: T }) };
    const flash = await timed(() => hook.run('v1_flash', s, inputs).then((r) => r.out));
    rows.push({ case: 'prefill', T, S: T, engine: 'v1_flash', ms: flash.ms, error: 0 });
    const eagerProblem = hook.problem('v0_eager', s);
    if (eagerProblem) rows.push({ case: 'prefill', T, S: T, engine: 'v0_eager', ms: null, note: eagerProblem });
    else {
      const eager = await timed(() => hook.run('v0_eager', s, inputs).then((r) => r.out));
      rows.push({ case: 'prefill', T, S: T, engine: 'v0_eager', ms: eager.ms, error: maxDiff(eager.out, flash.out) });
    }
    if (!ort) continue;
    const bias = new Float32Array(T * T);
    for (let t = 0; t < T; t++) for (let k = t + 1; k < T; k++) bias[t * T + k] = -Infinity;
    const graphsToRun = [
      ['ort_unfused', 'unfused.onnx', () => ({
        q: new ort.Tensor('float32', inputs.q, [1, s.Hq, T, s.D]), k: new ort.Tensor('float32', inputs.k, [1, s.Hkv, T, s.D]),
        v: new ort.Tensor('float32', inputs.v, [1, s.Hkv, T, s.D]), bias: new ort.Tensor('float32', bias, [T, T]),
      }), (outputs) => outputs.out.data],
      ['ort_gqa', 'gqa.onnx', () => ({
        query: new ort.Tensor('float32', tokensMajor(inputs.q, s.Hq, T, s.D), [1, T, s.Hq * s.D]),
        key: new ort.Tensor('float32', tokensMajor(inputs.k, s.Hkv, T, s.D), [1, T, s.Hkv * s.D]),
        value: new ort.Tensor('float32', tokensMajor(inputs.v, s.Hkv, T, s.D), [1, T, s.Hkv * s.D]),
        seqlens_k: new ort.Tensor('int32', Int32Array.of(T - 1), [1]),
        total_sequence_length: new ort.Tensor('int32', Int32Array.of(T), []),
      }), (outputs) => tokensMajor(outputs.output.data, T, s.Hq, s.D)],
    ];
    for (const [engine, file, feeds, read] of graphsToRun) {
      try {
        const session = await ort.InferenceSession.create(`/onnx/${T}/${file}`, { executionProviders: ['webgpu'] });
        const run = await timed(async () => read(await session.run(feeds())));
        const error = maxDiff(run.out, flash.out);
        const wrong = !(error <= tolerance);
        rows.push({ case: 'prefill', T, S: T, engine, ms: run.ms, error, wrong, ...(wrong ? { wrong_rows: wrongRows(run.out, flash.out, T, s.D) } : {}) });
        await session.release();
      } catch (error) {
        rows.push({ case: 'prefill', T, S: T, engine, ms: null, note: String(error?.message ?? error).split('\n')[0].slice(0, 160) });
      }
    }
  }
  for (const S of decode) {
    const s = { ...shape, T: 1, S };
    const inputs = { q: normals(s.Hq * s.D), k: normals(s.Hkv * S * s.D), v: normals(s.Hkv * S * s.D), sinks: null, ranges: hook.ranges({ kind: 'causal', T: 1, S }) };
    const split = await timed(() => hook.run('v2_decode', s, inputs).then((r) => r.out));
    const flash = await timed(() => hook.run('v1_flash', s, inputs).then((r) => r.out));
    rows.push({ case: 'decode', T: 1, S, engine: 'v2_decode', ms: split.ms, error: maxDiff(split.out, flash.out) });
    rows.push({ case: 'decode', T: 1, S, engine: 'v1_flash', ms: flash.ms, error: 0 });
  }
  return rows;
}, { shape, tokens: options.tokens, decode: options.decode, runs: options.runs, graphs });

await close();
await site.close();
fs.rmSync(root, { recursive: true, force: true });

// The wasm core's fastest CPU kernel (grouped, core/ops/attention_kernels.hpp) on the same
// shapes, in Node's V8 on one thread, validated against the core's fp64 reference first:
// its time is the kernel's alone, its inputs already in wasm memory.
try {
  const bench = await loadBench();
  const report = JSON.parse(bench.benchCpu(JSON.stringify({
    heads: shape.Hq, kv_heads: shape.Hkv, head_dim: shape.D, prefill_T: options.tokens, decode_S: options.decode,
    kernels: ['grouped'], model: false, warmup: 1, min_runs: options.runs, max_runs: options.runs,
  })));
  if (report.error) throw new Error(report.error);
  for (const row of report.rows.filter((r) => r.kernel === 'grouped' && (r.case === 'prefill' || r.case === 'decode'))) {
    const passed = row.validation?.passed !== false;
    results.push({ case: row.case, T: row.T, S: row.S, engine: 'wasm_core', ms: passed ? row.ms : null,
      ...(passed ? { error: null } : { note: 'failed its validation against the core\'s fp64 reference' }) });
  }
} catch (error) {
  console.error(`webgpu-attention: the wasm core's column SKIPPED: ${error.message} (build it: scripts/build.sh wasm)`);
}
results.sort((a, b) => (a.case === b.case ? a.S - b.S : a.case === 'prefill' ? -1 : 1));

const load = os.loadavg().map((x) => x.toFixed(2)).join(' ');
const report = {
  date: new Date().toISOString().slice(0, 10), adapter: checked.adapter, checks: checked.summary, load_average: load,
  shape: { ...shape, causal: true, dtype: 'f32' }, runs: options.runs, tolerance: 1e-4, rows: results,
};
if (options.json) {
  console.log(JSON.stringify(report, null, 2));
} else {
  console.log(`webgpu-attention: ${report.date}, ${checked.adapter.replace(/^Running on /, '').replace(/\.$/, '')}`);
  console.log(`  ${checked.summary}`);
  console.log(`  B 1, Hq ${shape.Hq}, Hkv ${shape.Hkv}, D ${shape.D}, causal, f32; median of ${options.runs} calls, inputs and output in JavaScript arrays; load average ${load}`);
  console.log('  case       T      S  engine          ms     vs v1_flash   max |out - v1_flash|');
  for (const r of results) {
    const base = results.find((b) => b.case === r.case && b.S === r.S && b.engine === 'v1_flash');
    const ratio = r.ms && base?.ms ? `${(r.ms / base.ms).toFixed(2)}x` : '';
    const rowsNote = r.wrong_rows ? `, rows ${r.wrong_rows[0]} to ${r.wrong_rows.at(-1)} of 0 to ${r.T - 1} (${r.wrong_rows.length} rows)` : '';
    const error = r.ms === null ? r.note
      : r.error === null ? 'validated against the core\'s fp64 reference (kernel only, 1 CPU thread)'
        : `${r.error.toExponential(2)}${r.wrong ? `  WRONG (over 1e-4${rowsNote}): its time is a wrong result's` : ''}`;
    console.log(`  ${r.case.padEnd(8)} ${String(r.T).padStart(5)} ${String(r.S).padStart(6)}  ${r.engine.padEnd(12)} ${r.ms === null ? '      -' : r.ms.toFixed(1).padStart(8)}  ${ratio.padStart(10)}   ${error}`);
  }
}
