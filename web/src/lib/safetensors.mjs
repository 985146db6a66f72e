// A safetensors file read and written in JavaScript, as much as the page needs: the
// first-layer slice of the Shakespeare checkpoint is cut out at build time
// (web/tools/first-layer-slice.mjs) and read by the first screen's figure
// (lib/first-layer-core.ts), whose wasm module carries no JSON library; and the
// header of the whole checkpoint is parsed here for chapter 1's module, which reads
// the tensors itself but carries no JSON parser (lib/checkpoint-load.mjs). The format:
// an 8-byte little-endian header length N, N bytes of JSON {name: {dtype, shape,
// data_offsets: [begin, end]}, "__metadata__"?: {string: string}}, then the data,
// offsets counted from its start. Plain JavaScript, so Node runs it without a build.

export class SafetensorsError extends Error {}

const dtypeBytes = { F64: 8, F32: 4, F16: 2, BF16: 2, I64: 8, I32: 4, I16: 2, I8: 1, U8: 1, BOOL: 1 };

/**
 * The header of a safetensors file, parsed, and its length N (the data starts at 8 + N).
 * Throws SafetensorsError, naming `source`, for a file that is cut short or a header
 * that is not a JSON object; what the header says is not checked here.
 */
export function safetensorsHeader(file, source = 'safetensors file') {
  const fail = (what) => { throw new SafetensorsError(`${source}: ${what}`); };
  if (file.byteLength < 8) fail(`${file.byteLength} bytes, too short for a safetensors header`);
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const length = Number(view.getBigUint64(0, true));
  if (length > file.byteLength - 8) fail(`the header claims ${length} bytes, the file holds ${file.byteLength - 8} after its length`);
  let header;
  try {
    header = JSON.parse(new TextDecoder().decode(file.subarray(8, 8 + length)));
  } catch {
    fail('the header is not valid JSON');
  }
  if (header === null || typeof header !== 'object' || Array.isArray(header)) fail('the header is not a JSON object');
  return { header, length };
}

/**
 * The tensors of a safetensors file: [{name, dtype, shape, bytes}] in header order
 * (bytes: a Uint8Array view into `file`). Throws SafetensorsError, naming `source`,
 * for a file that is cut short, a header that is not such JSON, or offsets that do
 * not fit the data or the shape.
 */
export function readSafetensors(file, source = 'safetensors file') {
  const fail = (what) => { throw new SafetensorsError(`${source}: ${what}`); };
  const { header, length } = safetensorsHeader(file, source);
  const data = file.subarray(8 + length);
  const tensors = [];
  for (const [name, entry] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const { dtype, shape, data_offsets: offsets } = entry ?? {};
    if (!(dtype in dtypeBytes)) fail(`tensor '${name}' has an unknown dtype ${JSON.stringify(dtype)}`);
    if (!Array.isArray(shape) || !shape.every((n) => Number.isInteger(n) && n >= 0)) fail(`tensor '${name}' has no valid shape`);
    if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every(Number.isInteger) || offsets[0] > offsets[1] ||
        offsets[1] > data.byteLength) fail(`tensor '${name}' has data_offsets outside the data`);
    const size = shape.reduce((a, b) => a * b, 1) * dtypeBytes[dtype];
    if (offsets[1] - offsets[0] !== size) fail(`tensor '${name}' holds ${offsets[1] - offsets[0]} bytes, its shape needs ${size}`);
    tensors.push({ name, dtype, shape, bytes: data.subarray(offsets[0], offsets[1]) });
  }
  return { tensors, metadata: header.__metadata__ ?? {} };
}

/** A safetensors file holding `tensors` ([{name, dtype, shape, bytes}]) in that order, and `metadata`. */
export function writeSafetensors(tensors, metadata = {}) {
  const header = { __metadata__: metadata };
  let offset = 0;
  for (const t of tensors) {
    header[t.name] = { dtype: t.dtype, shape: t.shape, data_offsets: [offset, offset + t.bytes.byteLength] };
    offset += t.bytes.byteLength;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (json.length % 8)) % 8);  // the data starts 8-byte aligned, as safetensors' own writer pads it
  const head = new TextEncoder().encode(json);
  const file = new Uint8Array(8 + head.byteLength + offset);
  new DataView(file.buffer).setBigUint64(0, BigInt(head.byteLength), true);
  file.set(head, 8);
  let at = 8 + head.byteLength;
  for (const t of tensors) {
    file.set(t.bytes, at);
    at += t.bytes.byteLength;
  }
  return file;
}
