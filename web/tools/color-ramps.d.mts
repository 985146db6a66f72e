import type { Plugin } from 'vite';

/** Each scale as 256 CSS colours (see color-ramps.mjs). */
export function colorRampTables(): { viridis: string[]; rdBu: string[] };
export function colorRamps(): Plugin;
