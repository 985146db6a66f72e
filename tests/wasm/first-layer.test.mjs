// The first screen's model (wasm/bindings_first_layer.cpp, attention_first_layer) on the
// first-layer slice the build cuts from the shipped Shakespeare checkpoint
// (web/tools/first-layer-slice.mjs), with the page's own header reader, character ids
// and call into the module (web/src/lib/safetensors.mjs, character-ids.mjs,
// first-layer-call.mjs): layer 0's probabilities and the
// ids must equal, to the bit, the whole checkpoint's forward in attention_core (the
// module the Shakespeare sections use), and bad slices and text must be refused by name.
// The notebook's multi-head figure adds the second slice (v_proj, o_proj): layer 0's
// whole attention sublayer, again to the bit, and causal (a changed last character
// changes the last position's output only).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { loadCore, loadFirstLayer } from './load_core.mjs';
import { characterVocabulary, CharacterError } from '../../web/src/lib/character-ids.mjs';
import { loadCheckpoint } from '../../web/src/lib/checkpoint-load.mjs';
import { firstLayerAttention, firstLayerProbabilities } from '../../web/src/lib/first-layer-call.mjs';
import { readSafetensors, SafetensorsError, writeSafetensors } from '../../web/src/lib/safetensors.mjs';
import { firstLayerSlice, firstLayerTensors, firstLayerValueTensors } from '../../web/tools/first-layer-slice.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const shipped = path.join(repo, 'web', 'public', 'models', 'shakespeare');
const read = (file) => fs.readFileSync(path.join(shipped, file));
const config = JSON.parse(read('config.json'));
const tokenizer = JSON.parse(read('tokenizer.json'));
const model = new Uint8Array(read('model.safetensors'));

const texts = [
  'Before we proceed any further, hear me speak.',
  'First Citizen:\nYou are all resolved rather to die?',
  "ROMEO: O, she doth teach the torches to burn bright! 3$&';-",  // every kind of character
  'a',
  '',
  'x'.repeat(config.max_position_embeddings - 1),                    // the longest text
];

async function whole() {
  const module = await loadCore();
  const session = new module.CheckpointSession();
  const info = JSON.parse(loadCheckpoint(session, { config: JSON.stringify(config), model, tokenizer: JSON.stringify(tokenizer) }));
  assert.equal(info.error, undefined);
  return (text, capture = ['probabilities']) => JSON.parse(session.forward(text, { capture }));
}

test('layer 0 from the slice is the whole checkpoint\'s layer 0, bit for bit, with the same ids', async () => {
  const slice = readSafetensors(firstLayerSlice(model)).tensors;
  assert.deepEqual(slice.map((t) => t.name), firstLayerTensors);
  assert.ok(model.byteLength / firstLayerSlice(model).byteLength > 9, 'the slice is about a tenth of the model');
  const module = await loadFirstLayer();
  const forward = await whole();
  const vocabulary = characterVocabulary(tokenizer, config.max_position_embeddings - 1);
  for (const text of texts) {
    const ids = vocabulary.ids(text);
    const expected = forward(text);
    assert.deepEqual(ids, expected.tokens[0], `ids of ${JSON.stringify(text)}`);
    const probs = firstLayerProbabilities(module, config, slice, ids);
    assert.ok(probs instanceof Float32Array, probs.error);
    const layer0 = expected.layers[0].probabilities[0];  // [Hq][T][T]
    const T = ids.length;
    assert.equal(probs.length, config.num_attention_heads * T * T);
    let differ = 0;
    layer0.forEach((head, h) => head.forEach((row, t) => row.forEach((p, s) => {
      if (probs[(h * T + t) * T + s] !== p) differ += 1;
    })));
    assert.equal(differ, 0, `${differ} probabilities differ on ${JSON.stringify(text)}`);
  }
});

test('a changed weight changes the probabilities (the comparison can fail)', async () => {
  const module = await loadFirstLayer();
  const tensors = readSafetensors(firstLayerSlice(model)).tensors;
  const ids = characterVocabulary(tokenizer, 63).ids(texts[0]);
  const before = firstLayerProbabilities(module, config, tensors, ids);
  const wk = tensors.find((t) => t.name.endsWith('k_proj.weight'));
  const changed = new Uint8Array(wk.bytes);
  new DataView(changed.buffer).setFloat32(0, new DataView(changed.buffer).getFloat32(0, true) + 0.25, true);
  const after = firstLayerProbabilities(module, config, tensors.map((t) => (t === wk ? { ...t, bytes: changed } : t)), ids);
  assert.ok(before.some((p, i) => p !== after[i]));
});

test('bad slices, configs and text are refused by name', async () => {
  const module = await loadFirstLayer();
  const tensors = readSafetensors(firstLayerSlice(model)).tensors;
  const ids = [0, 20, 54];
  const error = (out) => (out instanceof Float32Array ? '(no error)' : out.error);
  assert.equal(error(firstLayerProbabilities(module, config, tensors.filter((t) => !t.name.endsWith('q_proj.weight')), ids)),
    "first-layer.safetensors: missing tensor 'model.layers.0.self_attn.q_proj.weight'");
  assert.match(error(firstLayerProbabilities(module, { ...config, hidden_size: 32 }, tensors, ids)),
    /first-layer.safetensors: tensor 'model.embed_tokens.weight' has shape \[66, 64\], config implies \[66, 32\]/);
  assert.match(error(firstLayerProbabilities(module, { ...config, head_dim: 1.5 }, tensors, ids)), /'head_dim' must be an integer/);
  const { vocab_size: ___, ...noVocab } = config;
  assert.equal(error(firstLayerProbabilities(module, noVocab, tensors, ids)), "config.json: missing field 'vocab_size'");
  assert.equal(error(firstLayerProbabilities(module, { ...config, rope_theta: '1e4' }, tensors, ids)), "config.json: field 'rope_theta' must be a number");
  // config_from_hf_json's defaults: head_dim = hidden_size / heads (16 here, as given), KV heads = query heads.
  const { head_dim: _, ...noHeadDim } = config;
  assert.deepEqual(firstLayerProbabilities(module, noHeadDim, tensors, ids), firstLayerProbabilities(module, config, tensors, ids));
  const { num_key_value_heads: __, ...noKvHeads } = config;
  assert.match(error(firstLayerProbabilities(module, noKvHeads, tensors, ids)), /k_proj.weight' has shape \[32, 64\], config implies \[64, 64\]/);
  const cut = tensors.map((t, i) => (i === 0 ? { ...t, bytes: t.bytes.subarray(4) } : t));
  assert.match(error(firstLayerProbabilities(module, config, cut, ids)), /has 16892 bytes, its shape needs 16896/);
  assert.match(error(firstLayerProbabilities(module, config, tensors, [0, 66])), /66/);

  const vocabulary = characterVocabulary(tokenizer, 63);
  assert.throws(() => vocabulary.ids('café'), (e) => e instanceof CharacterError && /never saw "é"/.test(e.message));
  assert.throws(() => vocabulary.ids('x'.repeat(64)), /at most 63 characters/);
  assert.throws(() => characterVocabulary({ model: { vocab: { a: 1 } } }, 63), /no <s>/);

  const file = firstLayerSlice(model);
  assert.throws(() => readSafetensors(file.subarray(0, 100), 'slice'), (e) => e instanceof SafetensorsError && /slice: the header claims/.test(e.message));
  assert.throws(() => readSafetensors(file.subarray(0, file.byteLength - 4), 'slice'), /data_offsets outside the data/);
  assert.throws(() => firstLayerSlice(writeSafetensors(tensors.slice(1))), /missing tensor 'model.embed_tokens.weight'/);
});

/** The two slices, as the notebook's multi-head figure loads them. */
const bothSlices = () => [...readSafetensors(firstLayerSlice(model)).tensors,
  ...readSafetensors(firstLayerSlice(model, 'model.safetensors', firstLayerValueTensors)).tensors];

test('layer 0\'s attention sublayer from both slices is the whole checkpoint\'s, bit for bit', async () => {
  const values = readSafetensors(firstLayerSlice(model, 'model.safetensors', firstLayerValueTensors)).tensors;
  assert.deepEqual(values.map((t) => t.name), firstLayerValueTensors);
  const module = await loadFirstLayer();
  const forward = await whole();
  const tensors = bothSlices();
  const vocabulary = characterVocabulary(tokenizer, config.max_position_embeddings - 1);
  const H = config.num_attention_heads, dh = config.head_dim, D = config.hidden_size;
  for (const text of texts) {
    const ids = vocabulary.ids(text);
    const T = ids.length;
    const expected = forward(text, ['probabilities', 'head_outputs', 'attention_update']).layers[0];
    const out = firstLayerAttention(module, config, tensors, ids);
    assert.equal(out.error, undefined, out.error);
    const differ = (got, want) => want.flat(Infinity).filter((x, i) => got[i] !== x).length + Math.abs(got.length - want.flat(Infinity).length);
    assert.equal(differ(out.probabilities, expected.probabilities[0]), 0, `probabilities of ${JSON.stringify(text)}`);
    assert.equal(differ(out.headOutputs, expected.head_outputs[0]), 0, `head outputs of ${JSON.stringify(text)}`);
    assert.equal(differ(out.update, expected.attention_update[0]), 0, `o_proj's output of ${JSON.stringify(text)}`);
    // merged [T, H*dh] is the head outputs [H, T, dh] side by side.
    for (let t = 0; t < T; t += 1)
      for (let h = 0; h < H; h += 1)
        for (let i = 0; i < dh; i += 1) assert.equal(out.merged[t * H * dh + h * dh + i], out.headOutputs[(h * T + t) * dh + i]);
    assert.equal(out.update.length, T * D);
  }
});

test('the sublayer is causal: a changed last character changes the last position\'s output only', async () => {
  const module = await loadFirstLayer();
  const tensors = bothSlices();
  const vocabulary = characterVocabulary(tokenizer, 63);
  const D = config.hidden_size;
  const a = firstLayerAttention(module, config, tensors, vocabulary.ids('To be, or not to be'));
  const b = firstLayerAttention(module, config, tensors, vocabulary.ids('To be, or not to bx'));
  const T = a.update.length / D;
  const same = (t) => a.update.subarray(t * D, (t + 1) * D).every((x, i) => Object.is(x, b.update[t * D + i]));
  for (let t = 0; t < T - 1; t += 1) assert.ok(same(t), `position ${t} changed`);
  assert.ok(!same(T - 1), 'the last position did not change');
  // A broken check would notice: the first character changed reaches every position.
  const c = firstLayerAttention(module, config, tensors, vocabulary.ids('Xo be, or not to be'));
  assert.ok(a.update.subarray(D, 2 * D).some((x, i) => x !== c.update[D + i]), 'position 1 reads position 1');
});

test('the sublayer names a missing or misshapen v_proj or o_proj', async () => {
  const module = await loadFirstLayer();
  const tensors = bothSlices();
  const ids = [0, 20, 54];
  assert.equal(firstLayerAttention(module, config, tensors.filter((t) => !t.name.endsWith('o_proj.weight')), ids).error,
    "first-layer.safetensors: missing tensor 'model.layers.0.self_attn.o_proj.weight'");
  assert.equal(firstLayerAttention(module, config, readSafetensors(firstLayerSlice(model)).tensors, ids).error,
    "first-layer.safetensors: missing tensor 'model.layers.0.self_attn.v_proj.weight'");
  const cut = tensors.map((t) => (t.name.endsWith('v_proj.weight') ? { ...t, shape: [16, 128] } : t));
  assert.match(firstLayerAttention(module, config, cut, ids).error, /v_proj.weight' has shape \[16, 128\], config implies \[32, 64\]/);
});
