// How the page loads its Emscripten modules, once each (moduleLoader), with the wasm
// fetched and compiled apart from the JavaScript glue: a widget may call
// compileWasm(url) when the reader is about to use it (a pointer over its button),
// and the factory, once its own code has arrived, instantiates the module already
// compiled (instantiateWith). Compiling then does not wait for the widget's code
// chunk: the two download side by side. The first figure's module may have started
// compiling before any module ran, from the page's head (early-start.ts).
import { takeEarlyCompile } from './early-start';

const compiled = new Map<string, Promise<WebAssembly.Module>>();

/** Fetches and compiles the wasm at `url` (streamed where the server says application/wasm). */
function fetchAndCompile(url: string): Promise<WebAssembly.Module> {
  return fetch(url).then(async (response) => {
    if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
    if (response.headers.get('content-type')?.startsWith('application/wasm')) return WebAssembly.compileStreaming(response);
    return WebAssembly.compile(await response.arrayBuffer());
  });
}

/** The compiled wasm at `url`, once per url: the head's early compile if it started one, else a compile of our own. */
export function compileWasm(url: string): Promise<WebAssembly.Module> {
  let module = compiled.get(url);
  if (!module) {
    // The head's compile streams only from a server that says application/wasm; if it failed, compile here.
    module = takeEarlyCompile(url)?.catch(() => fetchAndCompile(url)) ?? fetchAndCompile(url);
    module.catch(() => compiled.delete(url)); // a failed fetch may be retried
    compiled.set(url, module);
  }
  return module;
}

/**
 * Gives compileWasm(url) a module compiled elsewhere: a worker handed the page's compile
 * instantiates that one, and every worker sharing it shares its code, the engine's
 * optimised tiers included, instead of compiling (and warming) a copy of its own.
 */
export function useCompiled(url: string, module: WebAssembly.Module): void {
  if (!compiled.has(url)) compiled.set(url, Promise.resolve(module));
}

type ReceiveInstance = (instance: WebAssembly.Instance, module: WebAssembly.Module) => void;

/**
 * Emscripten's instantiateWasm option: instantiates the module compileWasm(url) compiled
 * (compiling it now if nothing asked before) with the glue's imports. The factory's own
 * promise never hears of a failure here, so it goes to `fail` (the caller rejects with it).
 */
export function instantiateWith(url: string, fail: (error: unknown) => void) {
  return (imports: WebAssembly.Imports, receive: ReceiveInstance): Record<string, never> => {
    compileWasm(url)
      .then(async (module) => receive(await WebAssembly.instantiate(module, imports), module))
      .catch(fail);
    return {}; // the exports arrive through receive
  };
}

type Factory = (options: Record<string, unknown>) => Promise<unknown>;

/**
 * A loader for one Emscripten module: the first call instantiates it (its wasm through
 * compileWasm), later calls share it, and after a failure the next call tries again.
 * `bind` turns the raw module into what the page calls.
 */
export function moduleLoader<T>(create: Factory, url: string, bind: (raw: unknown) => T): () => Promise<T> {
  let loading: Promise<T> | null = null;
  return () => {
    loading ??= new Promise<unknown>((resolve, reject) => {
      create({ instantiateWasm: instantiateWith(url, reject) }).then(resolve, reject);
    }).then(bind);
    loading.catch(() => (loading = null)); // a failed fetch may be retried
    return loading;
  };
}
