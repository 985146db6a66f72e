// Typed fields that say what the widget shows. A widget recomputes from a field only
// when what it holds is valid. While it holds something else the field is marked
// (aria-invalid), and the status line says what is wrong, what is allowed, and which
// value the pictures still show: typing 129 where 128 is the most leaves the widget on
// the last valid value, and the message names it ("Still showing prefix = 12, the last
// valid value.") rather than leaving the reader to guess.

export type Read<T> = { value: T } | { error: string };

const fmt = (n: number) => n.toLocaleString('en-US', { maximumFractionDigits: 6 });

/** The field's text, quoted for a message: ', not "1.5"', or nothing for an empty field. */
const got = (text: string) => (text === '' ? '' : `, not "${text.length > 24 ? `${text.slice(0, 24)}…` : text}"`);

/** A whole number from min to max, or a message naming the field and the allowed range. */
export function readWhole(input: HTMLInputElement, name: string, min: number, max: number): Read<number> {
  const text = input.value.trim();
  const value = Number(text);
  if (text === '' || !Number.isInteger(value) || value < min || value > max)
    return { error: `${name} must be a whole number from ${fmt(min)} to ${fmt(max)}${got(text)}.` };
  return { value };
}

/** Any number from min to max (decimals allowed), or a message naming the field and the range. */
export function readNumber(input: HTMLInputElement, name: string, min: number, max: number): Read<number> {
  const text = input.value.trim();
  const value = Number(text);
  if (text === '' || !Number.isFinite(value) || value < min || value > max)
    return { error: `${name} must be a number from ${fmt(min)} to ${fmt(max)}${got(text)}.` };
  return { value };
}

/** Marks the fields invalid (or clears the mark). */
export function markInvalid(inputs: Iterable<HTMLElement>, invalid = true): void {
  for (const input of inputs) {
    if (invalid) input.setAttribute('aria-invalid', 'true');
    else input.removeAttribute('aria-invalid');
  }
}

/**
 * What stays on show while a field is invalid, for the end of the status line:
 *   [['prefix', 12]]            -> " Still showing prefix = 12, the last valid value."
 *   [['d', 4096], ['T', 4096]]  -> " Still showing d = 4,096 and T = 4,096, the last valid values."
 * Empty when nothing valid has been shown yet.
 */
export function stillShowing(shown: [string, number | string][] | null): string {
  if (!shown || shown.length === 0) return '';
  const one = ([name, value]: [string, number | string]) => `${name} = ${typeof value === 'number' ? fmt(value) : value}`;
  const list = shown.length === 1 ? one(shown[0])
    : `${shown.slice(0, -1).map(one).join(', ')} and ${one(shown[shown.length - 1])}`;
  return ` Still showing ${list}, the last valid value${shown.length === 1 ? '' : 's'}.`;
}
