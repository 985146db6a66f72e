// What the page's head started before any of its modules ran (a small inline script,
// vite.config.ts's startFirstFigureEarly): the first figure's wasm compiling and its
// files downloading while the browser is still parsing the HTML. Each is handed over
// once; a page built without them (the dev server, a worker) gets undefined and
// starts its own.

interface EarlyStarts {
  compiled: Record<string, Promise<WebAssembly.Module>>;  // by absolute URL
  fetched: Record<string, Promise<Response>>;             // by absolute URL
}

declare global {
  // eslint-disable-next-line no-var
  var anatomyEarly: EarlyStarts | undefined;
}

const absolute = (url: string) => new URL(url, self.location.href).href;

function take<T>(table: Record<string, Promise<T>> | undefined, url: string): Promise<T> | undefined {
  if (!table) return undefined;
  const key = absolute(url);
  const started = table[key];
  delete table[key];
  return started;
}

/** The head's compile of the wasm at `url`, if it started one. */
export const takeEarlyCompile = (url: string) => take(self.anatomyEarly?.compiled, url);

/** The head's fetch of `url`, if it started one (a response body can be read only once). */
export const takeEarlyFetch = (url: string) => take(self.anatomyEarly?.fetched, url);
