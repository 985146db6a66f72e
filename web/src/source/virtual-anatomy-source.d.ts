// The module the Vite plugin in web/tools/anatomy-source.ts generates at build
// time from the C++ core: the marked files, verbatim, and where each section is.
declare module 'virtual:anatomy-source' {
  const source: {
    /** Path from the repository root ("core/ops/rms_norm.cpp") -> the file's text, unchanged, loaded on the first call. */
    files: Record<string, () => Promise<string>>;
    /** Section id -> its lines (1-based, inclusive, marker lines excluded). */
    sections: Record<string, { file: string; startLine: number; endLine: number }>;
    /** keyLines[operation id][view index][note index]: the lines each key-line note is about. */
    keyLines: Record<string, number[][][]>;
    /** Section id -> the shape contract of each function it defines, from the header next to its .cpp. */
    contracts: Record<string, { name: string; header: string; line: number; shapes: string[] }[]>;
  };
  export default source;
}
