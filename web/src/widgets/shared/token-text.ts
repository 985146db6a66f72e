// A tokenizer's piece of text as a label a reader can see: a space is a piece of
// its own in many vocabularies (" the", " "), a newline or a tab would vanish or
// break a line on a heatmap axis. Each is replaced by a visible mark, and long
// pieces are cut short so one token cannot crowd out its neighbours.

/** The marks used in place of invisible characters, for a key next to the labels. */
export const whitespaceKey = '␣ marks a space, ↵ a newline, ⇥ a tab';

/** Longest label in characters (code points), the ellipsis included. */
export const maxLabelChars = 12;

const marks: Record<string, string> = { ' ': '␣', '\n': '↵', '\t': '⇥' };
const names: Record<string, string> = { ' ': 'a space', '\n': 'a newline', '\t': 'a tab' };

/** One character as shown: a mark for space, newline and tab, the control picture (␍, ␀, …) for other control characters. */
function visibleChar(char: string): string {
  if (char in marks) return marks[char];
  const code = char.codePointAt(0)!;
  if (code < 0x20) return String.fromCodePoint(0x2400 + code); // U+2400 CONTROL PICTURES line up with C0
  if (code === 0x7f) return '␡';
  return char;
}

/** The whole text with every invisible character made visible; "" becomes "∅". */
export function visibleText(text: string): string {
  return text === '' ? '∅' : Array.from(text, visibleChar).join('');
}

/**
 * The text in quotes as visibleText shows it, naming the marks it uses, for a tooltip or
 * a readout: "↵" (↵ is a newline).
 */
export function namedText(text: string): string {
  const used = [...new Set(Array.from(text).filter((char) => char in names))];
  return `"${visibleText(text)}"` + (used.length ? ` (${used.map((char) => `${marks[char]} is ${names[char]}`).join(', ')})` : '');
}

/** visibleText, cut to maxLabelChars with "…" when longer. */
export function tokenLabel(text: string): string {
  const chars = Array.from(visibleText(text));
  return chars.length <= maxLabelChars ? chars.join('') : chars.slice(0, maxLabelChars - 1).join('') + '…';
}

