// Widget state in the URL, so a view can be shared. Each widget owns the query
// parameters that start with its own prefix ("explorer.tokens", "mask-gallery.kind", ...).
// Updates use history.replaceState, so moving a slider does not flood the
// history, and at most once per 250 ms: replaceState takes milliseconds, more
// than a redraw, and Safari refuses more than 100 calls in 30 seconds. The
// values set in the meantime are merged; the latest of each wins.

type Values = Record<string, string | number | null>;
const writeEveryMs = 250;

export class UrlState {
  private pending: Values | null = null;

  constructor(private readonly prefix: string) {}

  get(name: string): string | null {
    return new URLSearchParams(location.search).get(`${this.prefix}.${name}`);
  }

  getNumber(name: string, fallback: number, min: number, max: number): number {
    const raw = this.get(name);
    const value = raw === null ? NaN : Number(raw);
    return Number.isFinite(value) ? Math.min(max, Math.max(min, Math.round(value))) : fallback;
  }

  /** Writes several parameters at once (within 250 ms); null removes one. */
  set(values: Values): void {
    if (this.pending === null) setTimeout(() => this.write(), writeEveryMs);
    this.pending = { ...this.pending, ...values };
  }

  private write(): void {
    const values = this.pending!;
    this.pending = null;
    const params = new URLSearchParams(location.search);
    for (const [name, value] of Object.entries(values)) {
      if (value === null) params.delete(`${this.prefix}.${name}`);
      else params.set(`${this.prefix}.${name}`, String(value));
    }
    const query = params.toString();
    history.replaceState(history.state, '', `${location.pathname}${query ? `?${query}` : ''}${location.hash}`);
  }
}
