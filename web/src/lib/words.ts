// Counts in running text: the number, grouped, and its noun in the right number,
// so a widget never says "1 queries" or "1 KV heads".

/** count(1, 'query', 'queries') -> "1 query"; count(4096, 'key') -> "4,096 keys". */
export function count(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
}
