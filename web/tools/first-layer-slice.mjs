// The first-layer slices of a checkpoint. The chapters' first screen loads the four
// tensors layer 0's attention probabilities depend on (the embedding, layer 0's
// input_layernorm, q_proj and k_proj; core/model/first_layer_attention.hpp says why),
// copied byte for byte from model.safetensors into a safetensors file of their own:
// for the page's Shakespeare model, 41.7 kB of its 413 kB. The notebook's multi-head
// figure adds the rest of layer 0's attention sublayer, v_proj and o_proj, in a second
// file (24.9 kB). The build writes both beside the model (vite.config.ts); they are
// never committed.
//
//   node web/tools/first-layer-slice.mjs MODEL.safetensors OUT.safetensors [values]
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { readSafetensors, writeSafetensors } from '../src/lib/safetensors.mjs';

export const firstLayerTensors = [
  'model.embed_tokens.weight',
  'model.layers.0.input_layernorm.weight',
  'model.layers.0.self_attn.q_proj.weight',
  'model.layers.0.self_attn.k_proj.weight',
];

export const firstLayerValueTensors = [
  'model.layers.0.self_attn.v_proj.weight',
  'model.layers.0.self_attn.o_proj.weight',
];

/** model.safetensors' bytes -> the slice's bytes (of `names`). Throws when a tensor is missing or not float32. */
export function firstLayerSlice(model, source = 'model.safetensors', names = firstLayerTensors) {
  const { tensors } = readSafetensors(model, source);
  const slice = names.map((name) => {
    const tensor = tensors.find((t) => t.name === name);
    if (!tensor) throw new Error(`${source}: missing tensor '${name}'`);
    if (tensor.dtype !== 'F32') throw new Error(`${source}: tensor '${name}' is ${tensor.dtype}; the first screen reads float32`);
    return tensor;
  });
  const sha256 = createHash('sha256').update(model).digest('hex');
  return writeSafetensors(slice, { format: 'pt', sliced_from: `${source}, sha256 ${sha256}` });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [input, output, part] = process.argv.slice(2);
  if (!input || !output || (part !== undefined && part !== 'values')) {
    console.error('usage: node web/tools/first-layer-slice.mjs MODEL.safetensors OUT.safetensors [values]');
    process.exit(2);
  }
  try {
    fs.writeFileSync(output, firstLayerSlice(fs.readFileSync(input), input, part ? firstLayerValueTensors : firstLayerTensors));
  } catch (error) {
    console.error(`first-layer-slice: ${error.message}`);
    process.exit(2);
  }
}
