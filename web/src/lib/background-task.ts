// Work the reader did not ask for (figures further down preparing themselves) runs in
// tasks of its own at background priority, where the browser has a scheduler, so that a
// click elsewhere (say, opening trained-model) is not kept waiting behind it.

/** Resolves with `value` in a task of its own, at background priority where the browser has a scheduler. */
export function inBackgroundTask<T>(value: T): Promise<T> {
  const scheduler = (globalThis as { scheduler?: { postTask(task: () => void, options: { priority: string }): unknown } }).scheduler;
  return new Promise((resolve) => {
    if (scheduler) scheduler.postTask(() => resolve(value), { priority: 'background' });
    else setTimeout(() => resolve(value), 0);
  });
}
