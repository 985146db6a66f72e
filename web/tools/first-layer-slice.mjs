// The first-layer slice of a checkpoint, for the chapters' first screen: the four
// tensors layer 0's attention probabilities depend on (the embedding, layer 0's
// input_layernorm, q_proj and k_proj; core/model/first_layer_attention.hpp says why),
// copied byte for byte from model.safetensors into a safetensors file of their own.
// For the page's Shakespeare model that is 41.7 kB of its 413 kB. The build writes it
// beside the model (vite.config.ts, firstLayerSlice); it is never committed.
//
//   node web/tools/first-layer-slice.mjs MODEL.safetensors OUT.safetensors
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { readSafetensors, writeSafetensors } from '../src/lib/safetensors.mjs';

export const firstLayerTensors = [
  'model.embed_tokens.weight',
  'model.layers.0.input_layernorm.weight',
  'model.layers.0.self_attn.q_proj.weight',
  'model.layers.0.self_attn.k_proj.weight',
];

/** model.safetensors' bytes -> the slice's bytes. Throws when a tensor is missing or not float32. */
export function firstLayerSlice(model, source = 'model.safetensors') {
  const { tensors } = readSafetensors(model, source);
  const slice = firstLayerTensors.map((name) => {
    const tensor = tensors.find((t) => t.name === name);
    if (!tensor) throw new Error(`${source}: missing tensor '${name}'`);
    if (tensor.dtype !== 'F32') throw new Error(`${source}: tensor '${name}' is ${tensor.dtype}; the first screen reads float32`);
    return tensor;
  });
  const sha256 = createHash('sha256').update(model).digest('hex');
  return writeSafetensors(slice, { format: 'pt', sliced_from: `${source}, sha256 ${sha256}` });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [input, output] = process.argv.slice(2);
  if (!input || !output) {
    console.error('usage: node web/tools/first-layer-slice.mjs MODEL.safetensors OUT.safetensors');
    process.exit(2);
  }
  try {
    fs.writeFileSync(output, firstLayerSlice(fs.readFileSync(input), input));
  } catch (error) {
    console.error(`first-layer-slice: ${error.message}`);
    process.exit(2);
  }
}
