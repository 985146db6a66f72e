// Opens a checkpoint `attn train` wrote (config.json, model.safetensors,
// tokenizer.json) in a CheckpointSession of chapter 1's module (wasm/bindings_checkpoint.cpp).
// That module carries no JSON parser: the browser's JSON.parse reads the two JSON
// files and the safetensors header here, and the core checks what they say. Shared
// by the page (lib/checkpoint-core.ts) and the Node tests. Plain JavaScript, so Node
// runs it without a build.
import { safetensorsHeader } from './safetensors.mjs';

/** `text` parsed, or an Error naming the file. */
function parseFile(text, file) {
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`${file} is not valid JSON`);
  }
}

/**
 * session.load's answer (JSON text: {config, vocab_size, parameters, context}, or
 * {error}) for the checkpoint's files: `config` and `tokenizer` as text, `model` as bytes.
 * A file that is not JSON, or a safetensors file cut short, is answered as {error} too.
 */
export function loadCheckpoint(session, { config, model, tokenizer }) {
  try {
    const { header } = safetensorsHeader(model, 'model.safetensors');
    return session.load(parseFile(config, 'config.json'), model, header, parseFile(tokenizer, 'tokenizer.json'));
  } catch (error) {
    return JSON.stringify({ error: error.message });
  }
}
