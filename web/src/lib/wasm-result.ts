// What every wasm module's bindings share: a result is JSON text (or an object)
// that is either the answer or {error: message}, the core's own words for what was
// wrong (wasm/json_args.hpp's json_or_error). Each module's wrapper turns the error
// into its own Error class, so a widget can tell whose refusal it is.

/** The answer in `out`, or throws fail(message) for {error: message}. */
export function unwrapResult<T>(out: unknown, fail: (message: string) => Error): T {
  const result = typeof out === 'string' ? JSON.parse(out) : out;
  if (result && typeof result === 'object' && !Array.isArray(result) && 'error' in result) throw fail(String(result.error));
  return result as T;
}
