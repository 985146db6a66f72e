/** The widget each old number ("w1", ...) of a shared link stood for. */
export const widgetOfOldNumber: Readonly<Record<string, string>>;
/** `search` with every old key ("w1.tokens") renamed to today's ("explorer.tokens"), or null when it has none. */
export function renameOldKeys(search: string): string | null;
