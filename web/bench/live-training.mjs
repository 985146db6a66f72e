// How fast live-training trains in the page, and when its heads form, in headless Chromium:
// opens the trainer on the Tiny Shakespeare excerpt (web/dist/corpora, written by
// scripts/build-web.sh), presses Start and samples the widget every few seconds:
//
//   steps, tokens per second   the widget's readout (data-steps, data-tokens-per-second:
//                              the worker's rate over its last 3 s of running)
//   previous token, induction, sink
//                              the best score of each over every head, as the core measures
//                              them (the score table, lessons/head_patterns.hpp)
//   probe stripe               on the default probe text (a line, then 12 random letters
//                              written twice), the mean weight the second copy gives the key
//                              11 back (the letter after the earlier occurrence), for the
//                              head in the right-hand heatmap
//   held-out                   the last held-out loss on the plot
//
// and the step and the seconds of training at which the widget first saw a
// previous-token score and an induction score of 0.5, the core's mark (its milestones);
// it stops when both are reached and at least --min-seconds have passed.
//
// Then, side by side, native speed: `attn train` with the options the widget ran
// (read from the page) on the same excerpt, with as many threads as the machine has
// cores, before and after the browser's run; it prints the browser's median rate
// over the samples after the first, the native runs' rates, and their ratio.
//
// Usage (after scripts/build.sh and scripts/build-web.sh):
//   node web/bench/live-training.mjs [--seconds 240] [--every 10] [--repeats 0.25] [--min-seconds 60] [--native-steps 1500]
// ATTN selects the binary (default build/native/native/attn).
// Not part of ctest: timings depend on the machine and on what else it runs.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';
import { distDir, openPage, startSite, waitForWidgets } from '../../tests/browser/harness.mjs';
import { median } from './stats.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const attn = process.env.ATTN || path.join(repo, 'build', 'native', 'native', 'attn');

/** Tokens per second of `attn train` with the widget's options on `textFile` (its record's training time). */
function nativeRate(options, textFile, steps) {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'live-training-native-'));
  try {
    const dir = path.join(out, 'model');
    execFileSync(attn, ['train', '--text', textFile, '--out', dir, '--steps', String(steps), '--seed', String(options.seed),
      '--context', String(options.context), '--batch', String(options.batch), '--lr', String(options.lr),
      '--warmup', String(options.warmup), '--repeat-fraction', String(options.repeat_fraction),
      '--config', JSON.stringify({ hidden_size: options.hidden_size, intermediate_size: 3 * options.hidden_size }),
      '--threads', String(os.availableParallelism()), '--eval-every', '1000000'], { stdio: 'ignore' });
    return JSON.parse(fs.readFileSync(path.join(dir, 'training.json'), 'utf8')).result.tokens_per_second;
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
}

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? Number(args[at + 1]) : fallback;
};
const seconds = option('seconds', 240), every = option('every', 10), nativeSteps = option('native-steps', 1500), minSeconds = option('min-seconds', 60), repeats = args.includes('--repeats') ? String(option('repeats', 0.25)) : null;

const site = await startSite({ cacheAssets: false });  // every load fetches and compiles, as a first visit
try {
  const { page, close } = await openPage(site.browser, site.url('index.html'));
  await waitForWidgets(page);
  await page.getByTestId('live-training-open').click();
  await page.waitForSelector('[data-testid="live-training-start"]');
  if (repeats !== null) await page.selectOption('[data-testid="live-training-repeats"]', repeats);
  console.log(`load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}; ${await page.getByTestId('live-training-settings').textContent()}`);
  const excerptFile = path.join(os.tmpdir(), `shakespeare-excerpt-${process.pid}.txt`);
  fs.writeFileSync(excerptFile, zlib.gunzipSync(fs.readFileSync(path.join(distDir(), 'corpora', 'shakespeare-excerpt.txt.gz'))));
  await page.getByTestId('live-training-start').click();
  // Paused at once while attn train runs with the same options, so the two do not share the cores.
  const phase = (name) => page.waitForSelector(`[data-widget="live-training"] .widget-body[data-phase="${name}"]`);
  await phase('running');
  await page.getByTestId('live-training-pause').click();
  await phase('paused');
  const options = JSON.parse(await page.getAttribute('[data-testid="live-training-speed"]', 'data-options'));
  const nativeBefore = nativeRate(options, excerptFile, nativeSteps);
  await page.getByTestId('live-training-start').click(); // Continue
  const rates = [];
  const started = Date.now();
  console.log('  wall s  steps  tokens/s  train s  prev  induction  sink  probe stripe (head)  held-out');
  for (;;) {
    await page.waitForTimeout(every * 1000);
    const sample = await page.evaluate(() => {
      const speed = document.querySelector('[data-testid="live-training-speed"]').dataset;
      const best = (name) => Math.max(0, ...[...document.querySelectorAll(`[data-testid="live-training-scores"] td[data-pattern="${name}"]`)].map((td) => Number(td.textContent)));
      const right = document.querySelector('[data-testid="live-training-heatmap-b"]');
      let stripe = null;
      if (right?.dataset.probabilities) {
        const p = JSON.parse(right.dataset.probabilities), R = 12, T = p.length;
        let sum = 0;
        for (let t = T - R; t < T; t++) sum += p[t][t - R + 1];
        stripe = { score: sum / R, head: `L${right.dataset.layer}H${right.dataset.head}` };
      }
      const chart = document.querySelector('[data-testid="live-training-loss-chart"] path[data-series="heldout"]');
      const milestones = [...document.querySelectorAll('[data-testid="live-training-milestones"] li[data-step]')].map((li) => ({
        pattern: li.dataset.pattern, step: Number(li.dataset.step), seconds: Number(li.dataset.seconds),
      }));
      return {
        steps: Number(speed.steps), tokensPerSecond: Number(speed.tokensPerSecond), trainSeconds: Number(speed.runningMs) / 1000,
        previous: best('previous_token'), induction: best('induction'), sink: best('first_token'), stripe,
        heldout: chart ? document.querySelector('[data-testid="live-training-loss-chart"] svg').getAttribute('aria-label').match(/Held-out loss .*, ([\d.]+) at step/)?.[1] : null,
        milestones, phase: document.querySelector('[data-widget="live-training"] .widget-body').dataset.phase,
      };
    });
    const wall = (Date.now() - started) / 1000;
    rates.push(sample.tokensPerSecond);
    console.log(`  ${wall.toFixed(0).padStart(6)}  ${String(sample.steps).padStart(5)}  ${String(sample.tokensPerSecond).padStart(8)}  ` +
      `${sample.trainSeconds.toFixed(1).padStart(7)}  ${sample.previous.toFixed(2)}  ${sample.induction.toFixed(2).padStart(9)}  ${sample.sink.toFixed(2)}  ` +
      `${sample.stripe ? `${sample.stripe.score.toFixed(2)} (${sample.stripe.head})`.padStart(19) : '                  -'}  ${sample.heldout ?? '-'}`);
    const done = (sample.milestones.length === 2 && wall >= minSeconds) || sample.phase === 'finished' || wall >= seconds;
    if (done) {
      for (const m of sample.milestones) console.log(`${m.pattern}: first reached its mark at step ${m.step}, after ${m.seconds} s of training`);
      if (!sample.milestones.length) console.log('no pattern reached its mark');
      break;
    }
  }
  if (await page.getAttribute('[data-widget="live-training"] .widget-body', 'data-phase') === 'running') {
    await page.getByTestId('live-training-pause').click();
    await phase('paused');
  }
  const nativeAfter = nativeRate(options, excerptFile, nativeSteps);
  fs.rmSync(excerptFile);
  const browser = median(rates.slice(1)), native = median([nativeBefore, nativeAfter]);
  console.log(`browser (${await page.getAttribute('[data-testid="live-training-speed"]', 'data-workers')} workers): median ${Math.round(browser)} tokens/s; ` +
    `attn train, ${os.availableParallelism()} threads, same options: ${Math.round(nativeBefore)} before, ${Math.round(nativeAfter)} after; ` +
    `browser / native = ${(browser / native).toFixed(2)}`);
  console.log(`load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  await close();
} finally {
  await site.close();
}
