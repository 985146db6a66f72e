// Our Llama tokenizer (attn tokenize, the C++ core) against the npm package
// llama-tokenizer-js, which ships the same 32,000-token Llama 2 vocabulary.
// The tokenizer.json our side reads is built here from that package's own data,
// so both start from identical vocabulary and merges; then more than 1,000 varied
// strings (ASCII, whitespace runs, Unicode from several scripts, emoji outside the
// BMP, combining marks, control characters, code) must encode to the same ids.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const attn = process.env.ATTN || path.join(repo, 'build', 'native', 'native', 'attn');
const packageFile = path.join(repo, 'web', 'node_modules', 'llama-tokenizer-js', 'llama-tokenizer.js');

async function reference() {
  assert.ok(fs.existsSync(packageFile), `${packageFile} is missing: run scripts/install-deps.sh (npm ci in web/)`);
  return (await import(pathToFileURL(packageFile).href)).default;
}

// A Hugging Face tokenizer.json holding the package's vocabulary and merges, in rank order.
function tokenizerJson(llama) {
  const vocab = {};
  llama.vocabById.forEach((piece, id) => (vocab[piece] = id));
  const merges = [...llama.merges.entries()].sort((a, b) => a[1] - b[1]).map(([pair]) => pair);
  return { version: '1.0', model: { type: 'BPE', byte_fallback: true, vocab, merges } };
}

// Deterministic text generator (a small LCG: the same strings on every run).
function* strings(count) {
  let state = 20240229;
  const next = () => (state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  const pick = (list) => list[Math.floor(next() * list.length)];
  const words = ['the', 'attention', 'cache', 'Hello', 'world', 'tokenizer', 'GPU', 'x', 'llama', 'is', 'a', 'of', 'unbelievable',
    'naïve', 'café', 'Straße', 'über', 'façade', 'résumé', '東京', '注意力', 'привет', 'мир', 'مرحبا', 'שלום', 'नमस्ते', '안녕하세요',
    'こんにちは', 'Ελληνικά', 'ñandú', '😀', '👩‍💻', '🇫🇷', '𝔘𝔫𝔦𝔠𝔬𝔡𝔢', 'e\u0301', 'Z\u0351\u036b', '½', '∑', '→', '™', '\u00a0', '\u200b',
    'don\'t', '"quoted"', '(paren)', '[1, 2, 3]', '{a: 1}', 'x += 1;', 'if (a < b)', '#include', 'http://example.com', 'foo_bar',
    'CamelCase', '1234567', '3.14159', '-42', '0x1F', '...', '!!', '??', '—', '–', '…', '\t', '\n', '\r\n', '  ', '   '];
  const fixed = ['', ' ', '  ', 'a', ' a', 'a ', '\n', '\n\n', '\t\t', 'Hello world', ' Hello world', 'Hello  world', 'Hello world ',
    '<s>', '</s>', '<unk>', '<0x0A>', '▁', '▁▁', '\u0000', '\u007f', '\uffff', '\ud7ff', '𐍈', 'ab'.repeat(300)];
  yield* fixed;
  for (let i = fixed.length; i < count; i++) {
    const n = 1 + Math.floor(next() * 12);
    let text = '';
    for (let w = 0; w < n; w++) text += pick(words) + pick([' ', ' ', ' ', '', '  ', '\n', ', ', '. ', '\t']);
    if (next() < 0.3) text = text.trim();
    if (next() < 0.1) text = ' ' + text;
    if (next() < 0.05) text = [...text].map((c) => String.fromCodePoint(0x20 + ((c.codePointAt(0) * 7 + i) % 0x2fff))).join('');
    yield text;
  }
}

test('attn tokenize gives the ids of llama-tokenizer-js on 1,200 varied strings', async () => {
  const llama = await reference();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokenizer-'));
  try {
    fs.writeFileSync(path.join(dir, 'tokenizer.json'), JSON.stringify(tokenizerJson(llama)));
    const texts = [...strings(1200)];
    fs.writeFileSync(path.join(dir, 'texts.json'), JSON.stringify(texts));
    const ours = JSON.parse(execFileSync(attn, ['tokenize', '--tokenizer', path.join(dir, 'tokenizer.json'), '--batch', path.join(dir, 'texts.json')],
      { maxBuffer: 64 << 20 }).toString());
    assert.equal(ours.length, texts.length);
    let mismatches = 0;
    const examples = [];
    texts.forEach((text, i) => {
      const expected = llama.encode(text);
      if (JSON.stringify(expected) !== JSON.stringify(ours[i])) {
        mismatches++;
        if (examples.length < 5) examples.push({ text, expected, ours: ours[i] });
      }
    });
    assert.equal(mismatches, 0, `${mismatches} of ${texts.length} strings differ, e.g. ${JSON.stringify(examples, null, 1)}`);
    // The vocabulary really is Llama's: a few well-known ids.
    assert.deepEqual(ours[texts.indexOf('Hello world')], llama.encode('Hello world'));
    assert.equal(llama.vocabById.length, 32000);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('decoding our ids gives the text back, as the reference decodes it', async () => {
  const llama = await reference();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokenizer-'));
  try {
    fs.writeFileSync(path.join(dir, 'tokenizer.json'), JSON.stringify(tokenizerJson(llama)));
    for (const text of ['Hello world', '  two leading spaces', 'naïve café 東京 😀', 'tabs\tand\nnewlines', 'x += 1;']) {
      const out = JSON.parse(execFileSync(attn, ['tokenize', '--tokenizer', path.join(dir, 'tokenizer.json'), '--json', text]).toString());
      assert.equal(out.decoded, text);
      assert.equal(llama.decode(out.ids), text);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
