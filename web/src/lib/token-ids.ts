// Token ids as a reader types them ("1, 2, 3": commas or spaces), read the same
// way by every widget that takes ids: whole numbers from 0 to vocabSize - 1.

export interface IdRules {
  vocabSize: number;
  /** The most ids the widget takes. */
  max: number;
  /** The fewest (1 unless said). */
  min?: number;
  /** Who takes them, in the "at most" message: "the explorer", "the stepper". */
  taker?: string;
  /** Why `min`, when it is more than 1. */
  why?: string;
}

/** Reads `text` into ids, or says what is wrong with it. */
export function parseTokenIds(text: string, rules: IdRules): { ids: number[] } | { error: string } {
  const { vocabSize, max, min = 1, taker = 'this widget' } = rules;
  const parts = text.split(/[\s,]+/).filter((part) => part !== '');
  if (parts.length > max) return { error: `${parts.length} ids given; ${taker} takes at most ${max}.` };
  // Each id before the count: a single 1000 is out of range, whatever the count.
  const ids: number[] = [];
  for (const [t, part] of parts.entries()) {
    if (!/^\d+$/.test(part) || Number(part) >= vocabSize) {
      const why = /^\d+$/.test(part) ? ': it is out of range, ids are' : '; ids are';
      return { error: `${parts.length > 1 ? `Position ${t}: ` : ''}"${part}" is not a token id${why} whole numbers from 0 to ${vocabSize - 1}.` };
    }
    ids.push(Number(part));
  }
  if (parts.length < min)
    return { error: `Type at least ${min === 1 ? 'one token id' : `${min} token ids`}, e.g. 1,2,3.${rules.why ? ` ${rules.why}` : ''}` };
  return { ids };
}
