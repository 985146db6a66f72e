// Calling attention_first_layer (wasm/bindings_first_layer.cpp), which has no embind:
// the config's fields, the tensors and the ids are written into the module's memory as
// plain numbers and bytes, the C function is called, and its answer is copied out.
// Plain JavaScript, so that the page (lib/first-layer-core.ts) and Node's tests
// (tests/wasm/first-layer.test.mjs) call the module the same way.

/** config.json's fields, in the order bindings_first_layer.cpp reads them (NaN: not in the file). */
const configFields = [
  'vocab_size', 'hidden_size', 'num_hidden_layers', 'num_attention_heads', 'num_key_value_heads',
  'head_dim', 'intermediate_size', 'rope_theta', 'rms_norm_eps',
];

/** The NUL-ended UTF-8 text at `at` in the module's memory. */
function cString(module, at) {
  return new TextDecoder().decode(module.HEAPU8.subarray(at, module.HEAPU8.indexOf(0, at)));
}

/**
 * Layer 0's probabilities [Hq * T * T] for `ids` ([T], BOS first), from `config`
 * (config.json as parsed) and `tensors` ({name, shape, bytes (float32)}), or
 * {error: message} naming what is wrong with either.
 */
export function firstLayerProbabilities(module, config, tensors, ids) {
  return callFirstLayer(module, module._first_layer_probabilities, config, tensors, ids);
}

/**
 * Layer 0's whole attention sublayer for `ids`, from `config` and `tensors` that include
 * layer 0's v_proj and o_proj: {probabilities [Hq, T, T], headOutputs [Hq, T, dh],
 * merged [T, Hq*dh], update [T, D]}, each flat and row-major; or {error: message}.
 */
export function firstLayerAttention(module, config, tensors, ids) {
  const out = callFirstLayer(module, module._first_layer_attention, config, tensors, ids);
  if (!(out instanceof Float32Array)) return out;
  const T = ids.length, heads = config.num_attention_heads, D = config.hidden_size;
  const dh = config.head_dim ?? D / heads;
  const sizes = [heads * T * T, heads * T * dh, T * heads * dh, T * D];
  if (out.length !== sizes.reduce((a, b) => a + b)) return { error: `first_layer_attention answered ${out.length} numbers, expected ${sizes.join(' + ')}` };
  const parts = [];
  let at = 0;
  for (const size of sizes) parts.push(out.subarray(at, (at += size)));
  const [probabilities, headOutputs, merged, update] = parts;
  return { probabilities, headOutputs, merged, update };
}

function callFirstLayer(module, exported, config, tensors, ids) {
  const values = [];
  for (const field of configFields) {
    const value = config[field];
    if (value === undefined || value === null) values.push(NaN);
    else if (typeof value === 'number') values.push(value);
    else return { error: `config.json: field '${field}' must be a number` };
  }
  const names = new TextEncoder().encode(tensors.map((t) => `${t.name}\0`).join(''));
  const dims = tensors.flatMap((t) => t.shape);
  const allocated = [];
  // Each allocation can grow the memory, which replaces module.HEAP*: write after allocating.
  const place = (bytes) => {
    const at = module._malloc(Math.max(1, bytes.byteLength));
    allocated.push(at);
    module.HEAPU8.set(bytes, at);
    return at;
  };
  const bytesOf = (array) => new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
  try {
    const configAt = place(bytesOf(Float64Array.from(values)));
    const namesAt = place(names);
    const ranksAt = place(bytesOf(Int32Array.from(tensors, (t) => t.shape.length)));
    const dimsAt = place(bytesOf(Int32Array.from(dims)));
    const dataAt = Int32Array.from(tensors, (t) => place(t.bytes));
    const pointersAt = place(bytesOf(dataAt));
    const sizesAt = place(bytesOf(Int32Array.from(tensors, (t) => t.bytes.byteLength)));
    const idsAt = place(bytesOf(Int32Array.from(ids)));
    const out = exported(configAt, namesAt, ranksAt, dimsAt, pointersAt, sizesAt, tensors.length, idsAt, ids.length);
    if (out === 0) return { error: cString(module, module._first_layer_error()) };
    return module.HEAPF32.slice(out / 4, out / 4 + module._first_layer_size());
  } finally {
    for (const at of allocated) module._free(at);
  }
}
