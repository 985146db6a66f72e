// The WebGPU device the page's kernels run on: asked for once, described in words
// (vendor, architecture, f16, subgroups), and its limits kept, since every shape is
// checked against them before a dispatch. A browser without WebGPU, or one that
// grants no adapter, gets a sentence saying so instead of an exception.
import { askAdapter } from './gpu-adapter';

export interface AdapterSummary {
  vendor: string;
  architecture: string;
  description: string;
  /** The adapter can compute in f16 (`shader-f16`). */
  f16: boolean;
  /** The adapter has subgroup operations, and their smallest size when it says. */
  subgroups: boolean;
  subgroupMinSize: number | null;
  /** Chromium's software adapter (SwiftShader): its times are a CPU's. */
  software: boolean;
}

export interface Gpu {
  device: GPUDevice;
  adapter: AdapterSummary;
  limits: GPUSupportedLimits;
  /** Set once the device is lost: why. Every later dispatch refuses with it. */
  lostReason: string | null;
}

export type GpuOrReason = { gpu: Gpu } | { unavailable: string };

function summary(adapter: GPUAdapter): AdapterSummary {
  const info = adapter.info as GPUAdapterInfo & { subgroupMinSize?: number };
  const vendor = info.vendor || 'unknown vendor';
  const architecture = info.architecture || 'unknown architecture';
  return {
    vendor,
    architecture,
    description: info.description || '',
    f16: adapter.features.has('shader-f16'),
    subgroups: adapter.features.has('subgroups'),
    subgroupMinSize: typeof info.subgroupMinSize === 'number' ? info.subgroupMinSize : null,
    software: architecture === 'swiftshader' || /swiftshader/i.test(info.description ?? ''),
  };
}

/** The adapter's limits that the kernels need, asked for at their adapter's values rather than the defaults. */
const neededLimits = [
  'maxStorageBufferBindingSize', 'maxBufferSize', 'maxComputeWorkgroupStorageSize',
  'maxComputeInvocationsPerWorkgroup', 'maxComputeWorkgroupSizeX', 'maxComputeWorkgroupsPerDimension',
  'maxStorageBuffersPerShaderStage',
] as const;

/** A device on `adapter`, with the limits the kernels need; a sentence, never an exception, when refused. */
export async function openDevice(adapter: GPUAdapter): Promise<GpuOrReason> {
  const requiredLimits: Record<string, number> = {};
  for (const name of neededLimits) requiredLimits[name] = adapter.limits[name];
  let device: GPUDevice;
  try {
    device = await adapter.requestDevice({ requiredLimits });
  } catch (error) {
    return { unavailable: `The adapter refused a device: ${error instanceof Error ? error.message : String(error)}` };
  }
  const gpu: Gpu = { device, adapter: summary(adapter), limits: device.limits, lostReason: null };
  void device.lost.then((lost) => {
    gpu.lostReason = `the GPU device was lost (${lost.reason}${lost.message ? `: ${lost.message}` : ''})`;
  });
  return { gpu };
}

/** Asks the browser for an adapter and a device on it; a sentence, never an exception, when there is none. */
export async function openGpu(): Promise<GpuOrReason> {
  const adapter = await askAdapter();
  return typeof adapter === 'string' ? { unavailable: adapter } : openDevice(adapter);
}

/** "google swiftshader (software: its times are a CPU's), f32 only, subgroups of 4". */
export function describeAdapter(adapter: AdapterSummary): string {
  const parts = [`${adapter.vendor} ${adapter.architecture}`];
  if (adapter.software) parts[0] += ' (a software adapter: its times are a CPU\'s)';
  parts.push(adapter.f16 ? 'f16 and f32' : 'f32 only (no shader-f16)');
  parts.push(adapter.subgroups ? `subgroups${adapter.subgroupMinSize ? ` of ${adapter.subgroupMinSize} or more` : ''}` : 'no subgroups');
  return parts.join(', ');
}
