// Links shared before the widgets had names: their state keys were numbered ("w1.tokens",
// "w3.kind", ...). A page rewrites such a query to today's keys before any widget reads
// it, so an old link opens the same view as a new one. Plain JavaScript, so that
// tests/web/old-links.test.mjs runs it under Node.

/** The widget each old number stood for. */
export const widgetOfOldNumber = {
  w0: 'first-screen', w1: 'explorer', w2: 'soft-lookup', w3: 'mask-gallery', w4: 'rope',
  w5: 'kv-stepper', w6: 'cost', w7: 'source-reader', w8: 'trace-viewer', w9: 'trained-model',
  w10: 'live-training', w11: 'previous-token-head', w12: 'induction-head',
  w13: 'first-token-weight', w14: 'loss-and-continuation',
};

/**
 * `search` (location.search, "?w1.tokens=5&x=1") with every old key renamed, in place,
 * or null when it has none. A key already given under its new name wins over its old one.
 */
export function renameOldKeys(search) {
  const params = new URLSearchParams(search);
  let renamed = false;
  const next = new URLSearchParams();
  for (const [key, value] of params) {
    const dot = key.indexOf('.');
    const widget = dot > 0 ? widgetOfOldNumber[key.slice(0, dot)] : undefined;
    if (widget === undefined) {
      next.append(key, value);
      continue;
    }
    renamed = true;
    const newKey = `${widget}${key.slice(dot)}`;
    if (!params.has(newKey)) next.append(newKey, value);
  }
  if (!renamed) return null;
  const query = next.toString();
  return query ? `?${query}` : '';
}
