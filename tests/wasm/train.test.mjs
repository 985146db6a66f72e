// The page's training (wasm/bindings_train.cpp, TrainingSession) is `attn train`,
// bit for bit: on a generated text, the first steps' losses and gradient norms, the
// final held-out loss and every head's pattern scores equal the native run's record;
// and the shipped Shakespeare model's first 50 recorded steps retrain to the same
// bits from the corpus. Another seed must differ, so the comparison can fail.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { loadCore, loadTrain } from './load_core.mjs';
import { shakespeare } from '../shared-models.mjs';
import { loadCheckpoint } from '../../web/src/lib/checkpoint-load.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const attn = process.env.ATTN || path.join(repo, 'build', 'native', 'native', 'attn');
const shipped = path.join(repo, 'web', 'public', 'models', 'shakespeare');

/** Sentences from a small word list: learnable, and no data file needed. */
function generatedText(characters) {
  const words = ['the', 'queen', 'said', 'and', 'king', 'of', 'to', 'my', 'lord', 'what', 'is', 'thy', 'name'];
  let seed = 7, text = '';
  const next = (n) => ((seed = (seed * 1103515245 + 12345) % 2147483648), seed % n);
  while (text.length < characters) {
    const sentence = Array.from({ length: 3 + next(6) }, () => words[next(words.length)]).join(' ');
    text += sentence[0].toUpperCase() + sentence.slice(1) + ['.\n', ', ', '!\n'][next(3)];
  }
  return text.slice(0, characters);
}

function call(session, method, ...args) {
  const result = JSON.parse(session[method](...args));
  assert.equal(result.error, undefined, `${method}: ${result.error}`);
  return result;
}

test('a training run in wasm is attn train, bit for bit', async () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'anatomy-train-'));
  try {
    const text = generatedText(12000), file = path.join(tmp, 'text.txt');
    fs.writeFileSync(file, text);
    const settings = { seed: 3, steps: 30, context: 32, batch: 20, lr: 1e-2, warmup: 10, repeat_fraction: 0.25 };
    execFileSync(attn, ['train', '--text', file, '--out', path.join(tmp, 'out'), '--steps', '30', '--seed', '3',
      '--context', '32', '--batch', '20', '--lr', '1e-2', '--warmup', '10', '--repeat-fraction', '0.25',
      '--eval-every', '15'], { stdio: ['ignore', 'ignore', 'pipe'] });
    const record = JSON.parse(fs.readFileSync(path.join(tmp, 'out', 'training.json'), 'utf8'));

    const module = await loadTrain();
    const session = new module.TrainingSession();
    const started = call(session, 'start', text, JSON.stringify(settings));
    assert.equal(started.vocab_size, record.config.vocab_size);
    assert.equal(started.characters, record.corpus.characters);
    const run = call(session, 'step', 30);
    assert.equal(run.steps_done, 30);
    assert.deepEqual(run.losses, record.first_steps.losses); // JSON prints doubles exactly: equal text, equal bits
    assert.deepEqual(run.norms, record.first_steps.gradient_norms);
    assert.equal(call(session, 'heldoutLoss').heldout_loss, record.result.heldout_loss);
    assert.deepEqual(call(session, 'headPatterns', 0), record.head_patterns); // 0: the longest string, as recorded
    assert.equal(call(session, 'headPatterns', 12).induction_length, 12);
    assert.match(JSON.parse(session.headPatterns(16)).error, /2 to 15 characters/);
    assert.ok(run.losses.at(-1) < run.losses[0] - 0.5, `the loss fell from ${run.losses[0]} to ${run.losses.at(-1)}`);

    const view = call(session, 'attention', 'The king');
    assert.deepEqual(view.labels, ['BOS', ...'The king']);
    assert.equal(view.probs.length, 2);
    for (const row of view.probs[1][3]) assert.ok(row.reduce((a, b) => a + b, 0) > 0.999);

    const other = new module.TrainingSession();
    call(other, 'start', text, JSON.stringify({ ...settings, seed: 4 }));
    assert.notDeepEqual(call(other, 'step', 30).losses, record.first_steps.losses);

    // Bad input answers {error}, and the session stays usable.
    const fresh = new module.TrainingSession();
    assert.match(JSON.parse(fresh.step(1)).error, /call start/);
    assert.match(JSON.parse(fresh.start('', '{}')).error, /empty/);
    assert.match(JSON.parse(fresh.start('too short', '{}')).error, /shorter than one window/);
    assert.match(JSON.parse(fresh.start(text, '{"repeat_fraction": 2}')).error, /repeat fraction/);
    assert.match(JSON.parse(session.attention('The kingdom §')).error, /'§' is not in this model's vocabulary/);
    assert.equal(call(session, 'step', 1).steps_done, 31);
    for (const s of [session, other, fresh]) s.delete();
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});

// The page trains on several workers: each holds a session started alike, computes
// some of a step's shards, hands them to the others, and every one ends the step with
// all of them. Two sessions here play two workers (shard s on worker s mod 2), through
// the same calls and the same Float32Array copies the workers post to each other.
test('a step shared between two sessions is the step of one, bit for bit', async () => {
  const module = await loadTrain();
  const text = generatedText(12000);
  const settings = { seed: 5, steps: 20, context: 32, batch: 20, lr: 1e-2, warmup: 5, repeat_fraction: 0.25 };
  const alone = new module.TrainingSession(), a = new module.TrainingSession(), b = new module.TrainingSession();
  const { parameters } = call(alone, 'start', text, JSON.stringify(settings));
  for (const s of [a, b]) call(s, 'start', text, JSON.stringify(settings));
  const expected = call(alone, 'step', 12);

  const losses = [], norms = [];
  for (let step = 0; step < 12; step++) {
    const { shards } = call(a, 'beginStep');
    assert.equal(call(b, 'beginStep').shards, shards);
    assert.equal(shards, 3); // 20 windows in shards of 8: 8, 8, 4
    const worker = (s) => (s % 2 ? b : a);
    const posted = [];
    for (let s = 0; s < shards; s++) posted.push({ s, loss: call(worker(s), 'computeShard', s).loss, gradients: worker(s).shardGradients(s) });
    for (const { s, loss, gradients } of posted) {
      assert.ok(gradients instanceof Float32Array && gradients.length === parameters, `shard ${s}: ${gradients}`);
      call(worker(s) === a ? b : a, 'receiveShard', s, loss, gradients);
    }
    const [ra, rb] = [call(a, 'endStep'), call(b, 'endStep')];
    assert.deepEqual(ra, rb);
    losses.push(ra.loss), norms.push(ra.norm);
  }
  assert.deepEqual(losses, expected.losses);
  assert.deepEqual(norms, expected.norms);
  assert.equal(call(a, 'heldoutLoss').heldout_loss, call(alone, 'heldoutLoss').heldout_loss);
  assert.deepEqual(call(b, 'headPatterns', 12), call(alone, 'headPatterns', 12));

  // A gradient that went astray changes the step: the comparison can fail.
  call(a, 'beginStep'), call(alone, 'beginStep');
  for (let s = 0; s < 3; s++) call(a, 'computeShard', s), call(alone, 'computeShard', s);
  const wrong = alone.shardGradients(1);
  wrong[0] += 1e-3;
  call(alone, 'receiveShard', 1, call(alone, 'computeShard', 1).loss, wrong);
  assert.notDeepEqual(call(alone, 'endStep').norm, call(a, 'endStep').norm);

  // Out of order or out of range: {error}, never a crash.
  assert.match(JSON.parse(a.endStep()).error, /beginStep/);
  assert.match(JSON.parse(a.computeShard(0)).error, /beginStep/);
  call(a, 'beginStep');
  assert.match(JSON.parse(a.computeShard(3)).error, /not one of this batch's 3/);
  assert.match(JSON.parse(a.endStep()).error, /neither computed nor received/);
  assert.match(JSON.parse(a.shardGradients(0)).error, /neither computed nor received/);
  assert.match(JSON.parse(a.receiveShard(0, 1, new Float32Array(5))).error, /numbers, not 5/);
  assert.match(JSON.parse(a.step(1)).error, /endStep/);
  for (const s of [alone, a, b]) s.delete();
});

test("the shipped model's first 50 recorded steps retrain to the same bits", async (t) => {
  const record = JSON.parse(fs.readFileSync(path.join(shipped, 'training.json'), 'utf8'));
  const corpus = shakespeare(t);
  if (!corpus) return;
  const text = fs.readFileSync(corpus, 'utf8');
  assert.equal(crypto.createHash('sha256').update(text).digest('hex'), record.corpus.sha256, 'the corpus is not the recorded one');
  const s = record.settings;
  assert.ok(s.warmup_steps >= 50, 'the first 50 steps must lie in the warm-up, which does not depend on the run length');
  const module = await loadTrain();
  const session = new module.TrainingSession();
  call(session, 'start', text, JSON.stringify({ seed: s.seed, steps: s.steps, context: s.context, batch: s.batch,
    lr: s.peak_learning_rate, warmup: s.warmup_steps, repeat_fraction: s.repeat_fraction,
    hidden_size: record.config.hidden_size }));
  const started = performance.now();
  const run = call(session, 'step', 50);
  const seconds = (performance.now() - started) / 1000;
  console.log(`wasm training: ${Math.round((50 * s.batch * s.context) / seconds)} tokens/s ` +
    `(width ${record.config.hidden_size}, ${s.batch} x ${s.context} tokens a step)`);
  assert.deepEqual(run.losses, record.first_steps.losses);
  assert.deepEqual(run.norms, record.first_steps.gradient_norms);
  session.delete();
});

test('the shipped weights hold what the page says of them, computed again by the core', async (t) => {
  const dir = shipped;
  const record = JSON.parse(fs.readFileSync(path.join(dir, 'training.json'), 'utf8'));
  // The shipped model's targets (held-out loss, a previous-token and an induction head), on the record attn train wrote.
  const best = (name) => Math.max(...record.head_patterns.patterns.find((p) => p.name === name).heads.flat());
  assert.ok(record.result.heldout_loss <= 1.8, `held-out loss ${record.result.heldout_loss}`);
  assert.ok(best('previous_token') >= 0.5, `previous-token ${best('previous_token')}`);
  assert.ok(best('induction') >= 0.4, `induction ${best('induction')}`);

  // The core in wasm, on the shipped files, finds the same head scores on the same text:
  // BOS and the first context - 1 characters of the corpus's held-out tenth.
  const module = await loadCore();  // the CheckpointSession is chapter 1's module's
  const session = new module.CheckpointSession();
  const files = {
    config: fs.readFileSync(path.join(dir, 'config.json'), 'utf8'),
    model: new Uint8Array(fs.readFileSync(path.join(dir, 'model.safetensors'))),
    tokenizer: fs.readFileSync(path.join(dir, 'tokenizer.json'), 'utf8'),
  };
  const info = JSON.parse(loadCheckpoint(session, files));
  assert.equal(info.error, undefined, info.error);
  assert.equal(info.context, record.settings.context);
  const corpus = shakespeare(t);
  if (!corpus) return;
  const characters = [...fs.readFileSync(corpus, 'utf8')];
  const heldout = characters.slice(characters.length - Math.floor(characters.length / 10));
  const patterns = call(session, 'headPatterns', heldout.slice(0, record.settings.context - 1).join(''), 1, 1);
  delete patterns.induction_text;
  // One string, as the record scored; the shipped record does not name the count.
  assert.equal(patterns.induction_strings, 1);
  delete patterns.induction_strings;
  assert.deepEqual(patterns, record.head_patterns);
  // Loss on held-out text is in the recorded range (a wrong weight layout gives about ln 65).
  const loss = call(session, 'loss', heldout.slice(0, 63).join('')).loss;
  assert.ok(loss < 2.2, `loss ${loss} on held-out text`);
  // Broken files are refused by name: a config the core finds wanting, files that are not JSON, a cut model.
  const refusal = (changed) => JSON.parse(loadCheckpoint(session, { ...files, ...changed })).error;
  assert.match(refusal({ config: '{}' }), /config.json: missing field/);
  assert.match(refusal({ config: '{"hidden_size": 64' }), /config.json is not valid JSON/);
  assert.match(refusal({ tokenizer: '[]' }), /tokenizer.json/);
  assert.match(refusal({ tokenizer: '' }), /tokenizer.json is not valid JSON/);
  assert.match(refusal({ model: files.model.subarray(0, 4) }), /model.safetensors: 4 bytes/);
  assert.match(refusal({ model: files.model.subarray(0, files.model.length - 4) }), /model.safetensors: tensor .* lies outside the file/);
  session.delete();
});
