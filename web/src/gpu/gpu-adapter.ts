// The browser's WebGPU adapter, or a sentence saying why there is none: the one step a
// page without a GPU takes (gpu-device.ts opens a device on the adapter; it loads only
// once there is one).

/** The adapter the browser grants, or why it grants none. */
export async function askAdapter(): Promise<GPUAdapter | string> {
  if (typeof navigator === 'undefined' || !navigator.gpu) return 'This browser has no WebGPU (navigator.gpu is missing).';
  try {
    return (await navigator.gpu.requestAdapter()) ?? 'The browser grants no WebGPU adapter here (none, or WebGPU is switched off).';
  } catch (error) {
    return `The browser refused a WebGPU adapter: ${error instanceof Error ? error.message : String(error)}`;
  }
}
