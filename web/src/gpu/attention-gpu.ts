// The page's WebGPU attention kernels (kernels/*.wgsl), dispatched: each version is
// compiled with the tile sizes that fit the adapter, every shape is checked against
// the adapter's limits before anything is dispatched (a shape that does not fit gets
// a sentence, never a lost device), and the results come back as Float32Arrays.
//
//   v0_eager   scores, mask, softmax, weighted sum: four passes, the score matrix in a buffer
//   v1_flash   tiled, online softmax, the score matrix never written; can record its tiles
//   v2_decode  one new query over a long cache, split into chunks merged by log-sum-exp
// Layouts: q [B, Hq, T, D], k and v [B, Hkv, S, D], out [B, Hq, T, D]; the mask as each
// query row's visible keys, [T, 4] (two half-open ranges), as the core computes them.
import commonSource from './kernels/common.wgsl?raw';
import onlineSoftmaxSource from './kernels/online_softmax.wgsl?raw';
import eagerSource from './kernels/attention_v0_eager.wgsl?raw';
import flashSource from './kernels/attention_v1_flash.wgsl?raw';
import decodeSource from './kernels/attention_v2_decode.wgsl?raw';
import type { Gpu } from './gpu-device';

export type KernelVersion = 'v0_eager' | 'v1_flash' | 'v2_decode';
export const kernelVersions: readonly KernelVersion[] = ['v0_eager', 'v1_flash', 'v2_decode'];

export interface AttentionShape {
  B: number; Hq: number; Hkv: number; T: number; S: number; D: number;
}

export interface AttentionInputs {
  q: Float32Array;
  k: Float32Array;
  v: Float32Array;
  /** One logit per query head, or null for none. */
  sinks: Float32Array | null;
  /** [T, 4]: each query row's visible keys, [r0, r1) and [r2, r3). */
  ranges: Int32Array;
}

/** Which head's tiles, and which query row's running maximum and sum, a flash dispatch records. */
export interface TileRecordRequest {
  batch: number;
  head: number;
  row: number;
}

export interface TileRecord {
  /** Query tiles down and key tiles across. */
  rows: number;
  cols: number;
  /** [rows, cols]: 1 computed with the mask, 2 skipped, 3 computed without it (every cell visible). */
  states: Uint32Array;
  /** [cols, 2]: the row's (m, l) after each key tile. */
  trace: Float32Array;
}

/** The tile sizes a version was compiled with: query rows per workgroup, keys per tile. */
export interface Tiles {
  rows: number;
  keys: number;
}

export interface AttentionRun {
  out: Float32Array;
  /** [B, Hq, T, S], from v0_eager only. */
  probs: Float32Array | null;
  record: TileRecord | null;
  tiles: Tiles;
  /** v2_decode: the chunks the cache was split into. */
  splits: number | null;
  /** From submitting the work to the device's saying it is done, in milliseconds. */
  ms: number;
}

/** Rewrites a kernel's source before it is compiled (the tests build broken kernels so). */
export type SourceEdit = (source: string, version: KernelVersion) => string;

export interface RunOptions {
  record?: TileRecordRequest;
  edit?: SourceEdit;
  /** v1_flash's tile sizes instead of chooseTiles' (the notebook draws the gallery's); tilesProblem says if they fit. */
  tiles?: Tiles;
  /** v0_eager: leave its probabilities on the device (a timed run reads back the output only). */
  skipProbs?: boolean;
}

/** The largest head size the kernels hold in an invocation's registers. */
export const largestHeadSize = 128;

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

/**
 * Query rows per workgroup (one invocation each) and keys per tile: as many rows as the
 * adapter allows up to 64, and the most keys, a power of two up to 64, whose K and V tiles
 * fit its workgroup storage with the kernels' other workgroup variables (tilesProblem).
 */
export function chooseTiles(limits: GPUSupportedLimits, D: number): Tiles | null {
  const rows = Math.min(64, limits.maxComputeInvocationsPerWorkgroup, limits.maxComputeWorkgroupSizeX);
  for (let keys = 64; keys >= 1; keys /= 2)
    if (tilesProblem(limits, D, { rows, keys }) === null) return { rows, keys };
  return null;
}

/** What keeps v1_flash from running with `tiles` on this adapter, in one sentence; null when they fit. */
export function tilesProblem(limits: GPUSupportedLimits, D: number, tiles: Tiles): string | null {
  const most = Math.min(limits.maxComputeInvocationsPerWorkgroup, limits.maxComputeWorkgroupSizeX);
  if (!Number.isInteger(tiles.rows) || tiles.rows < 1 || tiles.rows > most)
    return `a tile of ${tiles.rows} query rows needs as many invocations in a workgroup; this adapter allows ${most}`;
  const bytes = 2 * tiles.keys * D * 4 + tiles.rows * 4 + 16;
  if (!Number.isInteger(tiles.keys) || tiles.keys < 1 || bytes > limits.maxComputeWorkgroupStorageSize)
    return `K and V tiles of ${tiles.keys} keys at head size ${D} need ${bytes} bytes of workgroup storage; this adapter has ${limits.maxComputeWorkgroupStorageSize}`;
  return null;
}

/** Odd, so that chunks end inside a tile and the merge joins several: about 128 keys a chunk, 63 chunks at most. */
export function decodeSplits(S: number): number {
  let splits = Math.max(1, Math.min(63, Math.ceil(S / 128)));
  if (splits % 2 === 0 && splits < S) splits += 1;
  return Math.min(splits, S);
}

/** The invocations of a decode workgroup: the whole group, at least 32. */
function decodeWorkgroup(shape: AttentionShape): number {
  return Math.max(32, shape.Hq / shape.Hkv);
}

/** Workgroups for n items, 64 each, as an (x, y) grid within the per-dimension limit. */
function grid(items: number, limit: number): [number, number] {
  const groups = Math.max(1, Math.ceil(items / 64));
  const x = Math.min(groups, limit);
  return [x, Math.ceil(groups / x)];
}

/** What is wrong with running `version` on `shape` here, in one sentence; null when it fits. */
export function shapeProblem(gpu: Gpu, version: KernelVersion, shape: AttentionShape): string | null {
  const { B, Hq, Hkv, T, S, D } = shape;
  const limits = gpu.limits;
  for (const [name, value] of Object.entries(shape))
    if (!Number.isInteger(value) || value < 1) return `${name} must be a whole number of 1 or more (got ${value})`;
  if (Hq % Hkv !== 0) return `the ${Hq} query heads do not divide among ${Hkv} KV heads`;
  if (T > S) return `T (${T}) cannot exceed S (${S}): the queries are the last T of the S positions`;
  if (D > largestHeadSize) return `head size ${D} is over ${largestHeadSize}, the most the kernels hold in registers`;
  if (version === 'v2_decode' && T !== 1) return `v2_decode takes one query per sequence (T = 1), not ${T}`;
  const tiles = chooseTiles(limits, D);
  if (!tiles) return `a tile of keys at head size ${D} does not fit this adapter's ${limits.maxComputeWorkgroupStorageSize} bytes of workgroup storage`;
  const largest = Math.min(limits.maxStorageBufferBindingSize, limits.maxBufferSize);
  const buffers: [string, number][] = [
    ['q and out [B, Hq, T, D]', B * Hq * T * D * 4],
    ['k and v [B, Hkv, S, D]', B * Hkv * S * D * 4],
  ];
  if (version === 'v0_eager') buffers.push(['the score matrix [B, Hq, T, S]', B * Hq * T * S * 4]);
  if (version === 'v2_decode') buffers.push(['the chunks\' partial outputs', B * Hq * decodeSplits(S) * D * 4]);
  for (const [what, bytes] of buffers)
    if (bytes > largest) return `${version} needs ${mib(bytes)} for ${what}; this adapter's largest storage buffer is ${mib(largest)}: choose a smaller shape`;
  if (version === 'v0_eager' && B * Hq * T * S >= 2 ** 32) return 'v0_eager\'s score matrix would have 2^32 cells or more, past its 32-bit indices';
  const most = limits.maxComputeWorkgroupsPerDimension;
  const dispatches: [string, number][] = version === 'v1_flash'
    ? [['query tiles', Math.ceil(T / tiles.rows)], ['heads', Hq], ['sequences', B]]
    : version === 'v2_decode'
      ? [['chunks', decodeSplits(S)], ['KV heads', Hkv], ['sequences', B]]
      : [['rows of workgroups', grid(B * Hq * T * S, most)[1]]];
  for (const [what, count] of dispatches)
    if (count > most) return `${version} would dispatch ${count} workgroups of ${what}, over this adapter's ${most} per dimension`;
  if (version === 'v2_decode' && decodeWorkgroup(shape) > limits.maxComputeInvocationsPerWorkgroup)
    return `a KV group of ${Hq / Hkv} query heads is more than this adapter's ${limits.maxComputeInvocationsPerWorkgroup} invocations per workgroup`;
  return null;
}

function inputsProblem(shape: AttentionShape, inputs: AttentionInputs): string | null {
  const { B, Hq, Hkv, T, S, D } = shape;
  const sizes: [string, number, number][] = [
    ['q', inputs.q.length, B * Hq * T * D], ['k', inputs.k.length, B * Hkv * S * D],
    ['v', inputs.v.length, B * Hkv * S * D], ['ranges', inputs.ranges.length, T * 4],
  ];
  if (inputs.sinks) sizes.push(['sinks', inputs.sinks.length, Hq]);
  for (const [name, got, want] of sizes) if (got !== want) return `${name} holds ${got} values where the shape needs ${want}`;
  return null;
}

// ---- compiling

const sources: Record<KernelVersion, string> = { v0_eager: eagerSource, v1_flash: flashSource, v2_decode: decodeSource };
const entryPoints: Record<KernelVersion, string[]> = {
  v0_eager: ['scores_pass', 'mask_pass', 'softmax_pass', 'weighted_sum_pass'],
  v1_flash: ['flash'],
  v2_decode: ['decode_chunk', 'decode_merge'],
};

interface Compiled {
  pipelines: GPUComputePipeline[];
  layout: GPUBindGroupLayout;
}

const compiled = new WeakMap<GPUDevice, Map<string, Promise<Compiled>>>();

/** The source a version is compiled from: its constants, the shared part, the online softmax for the tiled ones, the kernel. */
export function kernelSource(version: KernelVersion, constants: Record<string, number | boolean>): string {
  const header = Object.entries(constants)
    .map(([name, value]) => typeof value === 'boolean' ? `const ${name}: bool = ${value};` : `const ${name}: u32 = ${value}u;`)
    .join('\n');
  const tiled = version === 'v0_eager' ? '' : `${onlineSoftmaxSource}\n`;
  return `${header}\n${commonSource}\n${tiled}${sources[version]}`;
}

async function compile(gpu: Gpu, version: KernelVersion, constants: Record<string, number | boolean>, edit?: SourceEdit): Promise<Compiled> {
  const { device } = gpu;
  const source = edit ? edit(kernelSource(version, constants), version) : kernelSource(version, constants);
  device.pushErrorScope('validation');
  const module = device.createShaderModule({ code: source, label: version });
  const info = await module.getCompilationInfo();
  const errors = info.messages.filter((m) => m.type === 'error');
  if (errors.length) {
    await device.popErrorScope();
    throw new Error(`${version}: the shader does not compile: ${errors.map((m) => `line ${m.lineNum}: ${m.message}`).join('; ')}`);
  }
  const storage = (binding: number, readOnly: boolean): GPUBindGroupLayoutEntry =>
    ({ binding, visibility: GPUShaderStage.COMPUTE, buffer: { type: readOnly ? 'read-only-storage' : 'storage' } });
  const layout = device.createBindGroupLayout({
    label: `${version} bindings`,
    entries: [
      { binding: 0, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'uniform' } },
      ...[1, 2, 3, 4, 5].map((b) => storage(b, true)),
      ...[6, 7, 8].map((b) => storage(b, false)),
    ],
  });
  const pipelineLayout = device.createPipelineLayout({ bindGroupLayouts: [layout] });
  const pipelines = await Promise.all(entryPoints[version].map((entryPoint) =>
    device.createComputePipelineAsync({ label: `${version} ${entryPoint}`, layout: pipelineLayout, compute: { module, entryPoint } })));
  const error = await device.popErrorScope();
  if (error) throw new Error(`${version}: ${error.message}`);
  return { pipelines, layout };
}

function compiledFor(gpu: Gpu, version: KernelVersion, constants: Record<string, number | boolean>, edit?: SourceEdit): Promise<Compiled> {
  if (edit) return compile(gpu, version, constants, edit);
  let cache = compiled.get(gpu.device);
  if (!cache) compiled.set(gpu.device, (cache = new Map()));
  const key = `${version} ${JSON.stringify(constants)}`;
  let found = cache.get(key);
  if (!found) {
    found = compile(gpu, version, constants);
    found.catch(() => cache.delete(key));
    cache.set(key, found);
  }
  return found;
}

// ---- running

/** The Shape uniform of kernels/common.wgsl: 16 words. */
function shapeUniform(shape: AttentionShape, fields: { hasSinks: boolean; splits: number; chunk: number; record: TileRecordRequest | null; tileCols: number }): ArrayBuffer {
  const words = new ArrayBuffer(64);
  const u = new Uint32Array(words);
  const f = new Float32Array(words);
  u.set([shape.B, shape.Hq, shape.Hkv, shape.T, shape.S, shape.D, shape.Hq / shape.Hkv, fields.hasSinks ? 1 : 0]);
  f[8] = 1 / Math.sqrt(shape.D);
  u.set([fields.splits, fields.chunk, fields.record?.head ?? 0, fields.record?.batch ?? 0, fields.record?.row ?? 0, fields.tileCols, 0], 9);
  return words;
}

/** Runs one version on one shape; throws an Error with one sentence when it cannot. */
export async function runAttention(gpu: Gpu, version: KernelVersion, shape: AttentionShape, inputs: AttentionInputs,
  options: RunOptions = {}): Promise<AttentionRun> {
  if (gpu.lostReason) throw new Error(gpu.lostReason);
  const problem = shapeProblem(gpu, version, shape) ?? inputsProblem(shape, inputs) ??
    (version === 'v1_flash' && options.tiles ? tilesProblem(gpu.limits, shape.D, options.tiles) : null);
  if (problem) throw new Error(problem);
  const record = version === 'v1_flash' ? options.record ?? null : null;
  if (record && (record.batch >= shape.B || record.head >= shape.Hq || record.row >= shape.T))
    throw new Error(`the tile record's head (${record.batch}, ${record.head}) or row ${record.row} is outside the shape`);
  const { device } = gpu;
  const { B, Hq, Hkv, T, S, D } = shape;
  const tiles = (version === 'v1_flash' ? options.tiles : undefined) ?? chooseTiles(gpu.limits, D)!;
  const readProbs = version === 'v0_eager' && !options.skipProbs;
  const splits = version === 'v2_decode' ? decodeSplits(S) : null;
  const chunk = splits ? Math.ceil(S / splits) : 0;
  const tileRows = Math.ceil(T / tiles.rows), tileCols = Math.ceil(S / tiles.keys);
  const constants: Record<string, number | boolean> = version === 'v1_flash'
    ? { BR: tiles.rows, BC: tiles.keys, DH: D, RECORD: record !== null }
    : version === 'v2_decode'
      ? { BC: tiles.keys, DH: D, GROUP_SIZE: decodeWorkgroup(shape) }
      : {};
  const { pipelines, layout } = await compiledFor(gpu, version, constants, options.edit);

  device.pushErrorScope('out-of-memory');
  device.pushErrorScope('validation');
  let scopesOpen = true;
  const made: GPUBuffer[] = [];
  const buffer = (bytes: number, usage: number, data?: ArrayBufferView | ArrayBuffer) => {
    const size = Math.max(16, Math.ceil(bytes / 4) * 4);
    const b = device.createBuffer({ size, usage, mappedAtCreation: data !== undefined });
    if (data !== undefined) {
      const bytesIn = data instanceof ArrayBuffer ? new Uint8Array(data) : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
      new Uint8Array(b.getMappedRange()).set(bytesIn);
      b.unmap();
    }
    made.push(b);
    return b;
  };
  const input = (data: ArrayBufferView) => buffer(data.byteLength, GPUBufferUsage.STORAGE, data);
  const output = (bytes: number) => buffer(bytes, GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC);
  try {
    const uniform = buffer(64, GPUBufferUsage.UNIFORM,
      shapeUniform(shape, { hasSinks: inputs.sinks !== null, splits: splits ?? 0, chunk, record, tileCols }));
    const q = input(inputs.q), k = input(inputs.k), v = input(inputs.v);
    const sinks = input(inputs.sinks ?? new Float32Array(1));
    const ranges = input(inputs.ranges);
    const out = output(B * Hq * T * D * 4);
    // Bindings 6, 7, 8: v0 scores, probs, out; v1 out, tile states, row trace; v2 out, chunks' (m, l), chunks' acc.
    const writable = version === 'v0_eager'
      ? [output(B * Hq * T * S * 4), output(B * Hq * T * S * 4), out]
      : version === 'v1_flash'
        ? [out, output(record ? tileRows * tileCols * 4 : 4), output(record ? tileCols * 8 : 8)]
        : [out, output(B * Hq * splits! * 8), output(B * Hq * splits! * D * 4)];
    const group = device.createBindGroup({
      layout,
      entries: [uniform, q, k, v, sinks, ranges, ...writable].map((b, binding) => ({ binding, resource: { buffer: b } })),
    });
    const encoder = device.createCommandEncoder();
    const pass = encoder.beginComputePass();
    pass.setBindGroup(0, group);
    const most = gpu.limits.maxComputeWorkgroupsPerDimension;
    if (version === 'v0_eager') {
      const [cells, rows, elements] = [B * Hq * T * S, B * Hq * T, B * Hq * T * D];
      for (const [pipeline, items] of [[0, cells], [1, cells], [2, rows], [3, elements]] as const) {
        pass.setPipeline(pipelines[pipeline]);
        pass.dispatchWorkgroups(...grid(items, most));
      }
    } else if (version === 'v1_flash') {
      pass.setPipeline(pipelines[0]);
      pass.dispatchWorkgroups(tileRows, Hq, B);
    } else {
      pass.setPipeline(pipelines[0]);
      pass.dispatchWorkgroups(splits!, Hkv, B);
      pass.setPipeline(pipelines[1]);
      pass.dispatchWorkgroups(Math.ceil(B * Hq / 64));
    }
    pass.end();
    // Everything read back goes through mappable copies.
    const results = readProbs ? [out, writable[1]] : version === 'v1_flash' && record ? writable : [out];
    const staging = results.map((b) => {
      const copy = buffer(b.size, GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST);
      encoder.copyBufferToBuffer(b, 0, copy, 0, b.size);
      return copy;
    });
    const started = performance.now();
    device.queue.submit([encoder.finish()]);
    await device.queue.onSubmittedWorkDone();
    const ms = performance.now() - started;
    const validation = await device.popErrorScope();
    const memory = await device.popErrorScope();
    scopesOpen = false;
    if (validation || memory) throw new Error(`${version}: ${(validation ?? memory)!.message}`);
    if (gpu.lostReason) throw new Error(gpu.lostReason);
    const read = await Promise.all(staging.map(async (copy) => {
      await copy.mapAsync(GPUMapMode.READ);
      return copy.getMappedRange().slice(0);
    }));
    return {
      out: new Float32Array(read[0], 0, B * Hq * T * D),
      probs: readProbs ? new Float32Array(read[1], 0, B * Hq * T * S) : null,
      record: version === 'v1_flash' && record
        ? { rows: tileRows, cols: tileCols, states: new Uint32Array(read[1], 0, tileRows * tileCols), trace: new Float32Array(read[2], 0, tileCols * 2) }
        : null,
      tiles: version === 'v0_eager' ? { rows: 1, keys: 1 } : tiles,
      splits,
      ms,
    };
  } catch (error) {
    // Leave the error scopes balanced whatever failed.
    if (scopesOpen) {
      await device.popErrorScope().catch(() => null);
      await device.popErrorScope().catch(() => null);
    }
    throw error;
  } finally {
    for (const b of made) b.destroy();
  }
}
