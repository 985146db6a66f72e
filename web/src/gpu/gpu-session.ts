// The notebook's GPU, checked once for every figure that uses it: the browser is asked
// for a WebGPU device; where one is granted, the kernels' checks (kernel-checks.ts) run
// on it before any figure believes it. The figures wait for the verdict (GpuVerdict,
// kernel-checks.ts). Only the adapter's question is in this file's chunk: the device, the kernels and the
// core's checks module load once an adapter is granted, so a page without one fetches
// none of them.
import { askAdapter } from './gpu-adapter';
import type { GpuSession } from './kernel-checks';

export type { GpuSession, GpuVerdict } from './kernel-checks';

let session: GpuSession | null = null;

/** The one session of the page: the first call asks for the adapter and, given one, opens it and starts the checks. */
export function gpuSession(): GpuSession {
  if (session) return session;
  const checked = askAdapter().then<string | GpuSession>(async (adapter) =>
    (typeof adapter === 'string' ? adapter : (await import('./kernel-checks')).checkDevice(adapter)));
  session = {
    opened: checked.then((c) => (typeof c === 'string' ? { unavailable: c } : c.opened)),
    verdict: checked.then((c) => (typeof c === 'string' ? { kind: 'none', reason: c } : c.verdict)),
    watch: (onRow) => void checked.then((c) => typeof c !== 'string' && c.watch(onRow)),
  };
  return session;
}
