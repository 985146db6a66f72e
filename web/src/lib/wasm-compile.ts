// A wasm module's bytes fetched and compiled ahead of its JavaScript glue: a widget
// calls compileWasm(url) when the reader is about to use it (a pointer over its
// button), and the Emscripten factory, once its own code has arrived, instantiates
// the module already compiled (instantiateWith). Compiling no longer waits for the
// widget's code chunk: the two download side by side.

const compiled = new Map<string, Promise<WebAssembly.Module>>();

/** Fetches and compiles the wasm at `url` (streamed where the server says application/wasm), once per url. */
export function compileWasm(url: string): Promise<WebAssembly.Module> {
  let module = compiled.get(url);
  if (!module) {
    module = fetch(url).then(async (response) => {
      if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
      if (response.headers.get('content-type')?.startsWith('application/wasm')) return WebAssembly.compileStreaming(response);
      return WebAssembly.compile(await response.arrayBuffer());
    });
    module.catch(() => compiled.delete(url)); // a failed fetch may be retried
    compiled.set(url, module);
  }
  return module;
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
