// What the trace viewer's check shows once the learner opens a file (loaded on use by
// diff-door.ts, with attn diff's wasm module): the core's verdict on the file, the
// first diverging tensor drawn (diff-tensors.ts), then every tensor compared
// (diff-report.ts). The report always comes from the wasm diff, core/diff; the page
// only lays it out.
import { loadTraceViewerCore } from '../../lib/trace-viewer-core';
import { el } from '../../lib/dom';
import { comparedParts, verdictLines } from './diff-report';
import { DiffTensors } from './diff-tensors';

/** A learner's file of intermediate tensors, as opened. */
export interface LearnerFile {
  name: string;
  bytes: Uint8Array;
}

export class DiffPanel {
  readonly root = el('div', { class: 'diff-report', hidden: true });
  private readonly verdict = el('div');
  private readonly tensors = new DiffTensors();
  private readonly compared = el('div', { class: 'diff-compared' });

  constructor() {
    this.root.append(this.verdict, this.tensors.root, this.compared);
  }

  /**
   * Checks `file` against the tiny model seeded with `seed` on `tokens` ([B][T]). Throws
   * DiffError with the core's message for bad input; until the returned function is
   * called, what the panel shows stays as it was.
   */
  async compare(file: LearnerFile, tokens: number[][], seed: number): Promise<() => void> {
    const report = (await loadTraceViewerCore()).diff(tokens, seed, file.bytes);
    const d = report.first_divergence;
    const precision = report.compared.find((c) => c.name === d?.tensor)?.precision ?? '';
    const verdict = verdictLines(report, file.name, seed), compared = comparedParts(report);
    return () => {
      this.verdict.replaceChildren(...verdict);
      this.compared.replaceChildren(...compared);
      this.tensors.show(d, precision);
      this.root.hidden = false;
    };
  }
}
