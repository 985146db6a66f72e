// Numbers in running text: whole numbers grouped by thousands, and counts with their
// noun in the right number, so a widget never says "1 queries" or "1 KV heads".

/** groupDigits(12345) -> "12,345" (a number rounded to a whole one; a bigint as it is).
 * Written out rather than toLocaleString, whose first call in a page loads number-format
 * data (50 to 100 ms). */
export function groupDigits(n: number | bigint): string {
  return String(typeof n === 'bigint' ? n : Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** count(1, 'query', 'queries') -> "1 query"; count(4096, 'key') -> "4,096 keys". */
export function count(n: number, one: string, many = `${one}s`): string {
  return `${Number.isInteger(n) ? groupDigits(n) : String(n)} ${n === 1 ? one : many}`;
}
