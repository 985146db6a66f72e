// The page's colour scales (web/src/lib/colormap.ts) read tables the build samples
// from d3-scale-chromatic (web/tools/color-ramps.mjs) instead of shipping d3: the
// tables and the lookups of web/src/lib/color-ramp.mjs against d3 itself. Viridis
// must match d3 exactly (d3's is the same 256-colour table); RdBu, a spline, within
// one step of its 256 samples, with its ends and its white middle exact.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';

const webDir = path.resolve(import.meta.dirname, '..', '..', 'web');
const d3Path = createRequire(path.join(webDir, 'package.json')).resolve('d3-scale-chromatic');
const { interpolateRdBu, interpolateViridis } = await import(pathToFileURL(d3Path).href);
const { colorRampTables } = await import(pathToFileURL(path.join(webDir, 'tools', 'color-ramps.mjs')).href);
const { binned, sampled } = await import(pathToFileURL(path.join(webDir, 'src', 'lib', 'color-ramp.mjs')).href);

const { viridis, rdBu } = colorRampTables();
const channels = (color) => {
  const hex = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(color);
  return hex ? hex.slice(1).map((h) => parseInt(h, 16)) : color.match(/\d+/g).map(Number);
};

test('viridis over [min, max] is d3 interpolateViridis, exactly, bin edges and clamping included', () => {
  assert.equal(viridis.length, 256);
  for (const [min, max] of [[0, 1], [0, 2 * Math.PI], [-3, 5]]) {
    const scale = binned(viridis, min, max);
    const ts = [...Array.from({ length: 10001 }, (_, i) => i / 10000), ...Array.from({ length: 257 }, (_, i) => i / 256)];
    for (const t of ts) {
      const value = min + t * (max - min);  // as colormap.ts's sequential did with d3: the value's place in [min, max]
      assert.equal(scale(value), interpolateViridis((value - min) / (max - min)), `t = ${t} on [${min}, ${max}]`);
    }
    assert.equal(scale(min - 1), interpolateViridis(0));
    assert.equal(scale(max + 1), interpolateViridis(1));
  }
});

test('RdBu over [-limit, limit] is within one sample of d3 interpolateRdBu; ends and zero exact', () => {
  assert.equal(rdBu.length, 256);
  const limit = 0.37, scale = sampled(rdBu, -limit, limit);
  let worst = 0;
  for (let i = 0; i <= 10000; i++) {
    const t = i / 10000;
    const ours = channels(scale(-limit + 2 * limit * t)), theirs = channels(interpolateRdBu(t));
    worst = Math.max(worst, ...ours.map((c, k) => Math.abs(c - theirs[k])));
  }
  assert.ok(worst <= 2, `a channel differs by ${worst} of 255`);
  assert.equal(scale(-limit), interpolateRdBu(0));
  assert.equal(scale(limit), interpolateRdBu(1));
  assert.equal(scale(-5), interpolateRdBu(0), 'clamped below');
  assert.equal(scale(5), interpolateRdBu(1), 'clamped above');
  const middle = channels(scale(0)), white = channels(interpolateRdBu(0.5));
  assert.ok(middle.every((c, k) => Math.abs(c - white[k]) <= 1), `zero is ${scale(0)}, d3's middle ${interpolateRdBu(0.5)}`);
});
