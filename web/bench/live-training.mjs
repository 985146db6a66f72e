// How fast W10 trains in the page, and when its heads form, in headless Chromium:
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
// previous-token score of 0.5 and an induction score of 0.4 (its milestones).
//
// Usage (after scripts/build-web.sh):
//   node web/bench/live-training.mjs [--seconds 240] [--every 10] [--repeats 0.25]
// Not part of ctest: timings depend on the machine and on what else it runs.
import os from 'node:os';
import { openPage, startSite, waitForWidgets } from '../../tests/browser/harness.mjs';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? Number(args[at + 1]) : fallback;
};
const seconds = option('seconds', 240), every = option('every', 10), repeats = args.includes('--repeats') ? String(option('repeats', 0.25)) : null;

const site = await startSite();
try {
  const { page, close } = await openPage(site.browser, site.url('index.html'));
  await waitForWidgets(page);
  await page.getByTestId('w10-open').click();
  await page.waitForSelector('[data-testid="w10-start"]');
  if (repeats !== null) await page.selectOption('[data-testid="w10-repeats"]', repeats);
  console.log(`load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}; ${await page.getByTestId('w10-settings').textContent()}`);
  await page.getByTestId('w10-start').click();
  const started = Date.now();
  console.log('  wall s  steps  tokens/s  train s  prev  induction  sink  probe stripe (head)  held-out');
  for (;;) {
    await page.waitForTimeout(every * 1000);
    const sample = await page.evaluate(() => {
      const speed = document.querySelector('[data-testid="w10-speed"]').dataset;
      const best = (name) => Math.max(0, ...[...document.querySelectorAll(`[data-testid="w10-scores"] td[data-pattern="${name}"]`)].map((td) => Number(td.textContent)));
      const right = document.querySelector('[data-testid="w10-heatmap-b"]');
      let stripe = null;
      if (right?.dataset.probabilities) {
        const p = JSON.parse(right.dataset.probabilities), R = 12, T = p.length;
        let sum = 0;
        for (let t = T - R; t < T; t++) sum += p[t][t - R + 1];
        stripe = { score: sum / R, head: `L${right.dataset.layer}H${right.dataset.head}` };
      }
      const chart = document.querySelector('[data-testid="w10-loss-chart"] path[data-series="heldout"]');
      const milestones = [...document.querySelectorAll('[data-testid="w10-milestones"] li[data-step]')].map((li) => ({
        pattern: li.dataset.pattern, step: Number(li.dataset.step), seconds: Number(li.dataset.seconds),
      }));
      return {
        steps: Number(speed.steps), tokensPerSecond: Number(speed.tokensPerSecond), trainSeconds: Number(speed.runningMs) / 1000,
        previous: best('previous_token'), induction: best('induction'), sink: best('first_token'), stripe,
        heldout: chart ? document.querySelector('[data-testid="w10-loss-chart"] svg').getAttribute('aria-label').match(/Held-out loss .*, ([\d.]+) at step/)?.[1] : null,
        milestones, phase: document.querySelector('[data-widget="w10"] .widget-body').dataset.phase,
      };
    });
    const wall = (Date.now() - started) / 1000;
    console.log(`  ${wall.toFixed(0).padStart(6)}  ${String(sample.steps).padStart(5)}  ${String(sample.tokensPerSecond).padStart(8)}  ` +
      `${sample.trainSeconds.toFixed(1).padStart(7)}  ${sample.previous.toFixed(2)}  ${sample.induction.toFixed(2).padStart(9)}  ${sample.sink.toFixed(2)}  ` +
      `${sample.stripe ? `${sample.stripe.score.toFixed(2)} (${sample.stripe.head})`.padStart(19) : '                  -'}  ${sample.heldout ?? '-'}`);
    const done = sample.milestones.length === 2 || sample.phase === 'finished' || wall >= seconds;
    if (done) {
      for (const m of sample.milestones) console.log(`${m.pattern}: first reached its mark at step ${m.step}, after ${m.seconds} s of training`);
      if (!sample.milestones.length) console.log('no pattern reached its mark');
      break;
    }
  }
  console.log(`load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  await close();
} finally {
  await site.close();
}
