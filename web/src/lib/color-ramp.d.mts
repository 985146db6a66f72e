/** The colour for a value, from `table` splitting [lo, hi] into equal bins. */
export function binned(table: readonly string[], lo: number, hi: number): (value: number) => string;
/** The colour for a value, the nearest of `table`'s samples of [lo, hi] (both ends included). */
export function sampled(table: readonly string[], lo: number, hi: number): (value: number) => string;
