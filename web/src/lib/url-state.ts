// Widget state in the URL, so a view can be shared. Each widget owns the query
// parameters that start with its own prefix ("w1.tokens", "w3.kind", ...).
// Updates use history.replaceState: moving a slider does not flood the history.

export class UrlState {
  constructor(private readonly prefix: string) {}

  get(name: string): string | null {
    return new URLSearchParams(location.search).get(`${this.prefix}.${name}`);
  }

  getNumber(name: string, fallback: number, min: number, max: number): number {
    const raw = this.get(name);
    const value = raw === null ? NaN : Number(raw);
    return Number.isFinite(value) ? Math.min(max, Math.max(min, Math.round(value))) : fallback;
  }

  /** Writes several parameters at once; null removes one. */
  set(values: Record<string, string | number | null>): void {
    const params = new URLSearchParams(location.search);
    for (const [name, value] of Object.entries(values)) {
      if (value === null) params.delete(`${this.prefix}.${name}`);
      else params.set(`${this.prefix}.${name}`, String(value));
    }
    const query = params.toString();
    history.replaceState(history.state, '', `${location.pathname}${query ? `?${query}` : ''}${location.hash}`);
  }
}
