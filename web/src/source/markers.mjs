// Section markers in the C++ core, and the checks that keep them honest.
//
// A section of the source is the lines strictly between two marker comments,
// each on a line of its own:
//
//     // [anatomy:rms_norm]
//     template <typename Real>
//     Tensor3<Real> rms_norm(...) { ... }
//     // [/anatomy:rms_norm]
//
// The table in sections.mjs says which file each section lives in, which code
// must lie inside it, and which operations of the source reader
// show it. This one module is used by the Vite plugin (the build fails on any
// error) and by tests/source-markers/check_markers.mjs (ctest fails), so the
// page and the test can never disagree about where a section is.
//
// Plain JavaScript with JSDoc types, so that node runs it without a build step;
// markers.d.mts gives TypeScript the same types.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A marker that is well formed and alone on its line: `// [anatomy:id]` or `// [/anatomy:id]`. */
const MARKER = /^\s*\/\/\s*\[(\/?)anatomy:([a-z][a-z0-9_]*)\]\s*$/;
/** Anything that looks like an attempt at a marker, to report typos instead of ignoring them. */
const MARKER_LIKE = /\[\s*\/?\s*anatomy\s*:/i;

/** Folders of the core, relative to the repository root, whose sources are scanned for markers. */
export const SCANNED_FOLDERS = ['core', 'core/model', 'core/ops'];

/**
 * @typedef {{ file: string, startLine: number, endLine: number }} SectionRange
 *   Lines are 1-based and inclusive; the marker lines themselves are outside.
 * @typedef {{ id: string, file: string, openLine: number, closeLine: number }} MarkerPair
 */

/**
 * Finds the marker pairs of one file.
 * @param {string} file path shown in messages, e.g. "core/ops/rms_norm.cpp"
 * @param {string} text the file's contents
 * @returns {{ pairs: MarkerPair[], errors: string[], unpaired: string[] }} unpaired: ids with a marker
 *   that has no partner (already described in errors)
 */
export function parseMarkers(file, text) {
  /** @type {MarkerPair[]} */
  const pairs = [];
  /** @type {string[]} */
  const errors = [];
  /** @type {Set<string>} */
  const unpaired = new Set();
  /** @type {Map<string, number>} id -> line of the opening marker still waiting for its close */
  const open = new Map();
  const lines = text.split('\n');
  lines.forEach((line, index) => {
    const lineNo = index + 1;
    const match = MARKER.exec(line);
    if (!match) {
      if (MARKER_LIKE.test(line))
        errors.push(
          `${file}:${lineNo}: malformed marker "${line.trim()}"; write "// [anatomy:id]" or "// [/anatomy:id]" ` +
            `on a line of its own (id: lower case letters, digits, _)`,
        );
      return;
    }
    const [, slash, id] = match;
    if (slash === '') {
      const earlier = open.get(id);
      if (earlier !== undefined)
        errors.push(`${file}:${lineNo}: [anatomy:${id}] opened again before the one at line ${earlier} was closed`);
      else open.set(id, lineNo);
      return;
    }
    const start = open.get(id);
    if (start === undefined) {
      unpaired.add(id);
      errors.push(`${file}:${lineNo}: [/anatomy:${id}] closes a section that was never opened`);
      return;
    }
    open.delete(id);
    if (lineNo === start + 1) errors.push(`${file}:${start}: section ${id} is empty (its markers are adjacent)`);
    else pairs.push({ id, file, openLine: start, closeLine: lineNo });
  });
  for (const [id, lineNo] of open) {
    unpaired.add(id);
    errors.push(`${file}:${lineNo}: [anatomy:${id}] is never closed; add "// [/anatomy:${id}]" after its last line`);
  }
  return { pairs, errors, unpaired: [...unpaired] };
}

/**
 * The lines (1-based) inside `ranges` whose text contains `needle`.
 * @param {string[]} lines the file split at "\n"
 * @param {SectionRange[]} ranges
 * @param {string} needle
 * @returns {number[]}
 */
export function linesContaining(lines, ranges, needle) {
  /** @type {number[]} */
  const found = [];
  for (const range of ranges)
    for (let n = range.startLine; n <= range.endLine; n += 1) if (lines[n - 1].includes(needle)) found.push(n);
  return found;
}

/**
 * Where `needle` is in the whole file, for messages that say where code went.
 * @param {string[]} lines
 * @param {string} needle
 */
function whereElse(lines, needle) {
  const at = lines.flatMap((line, i) => (line.includes(needle) ? [i + 1] : []));
  return at.length ? `it is at line ${at.join(', ')}, outside the section (did a marker move?)` : 'it is not in the file at all';
}

/**
 * @typedef {import('./sections.mjs').SectionSpec} SectionSpec
 * @typedef {import('./sections.mjs').Operation} Operation
 * @typedef {{
 *   files: Record<string, string>,
 *   sections: Record<string, SectionRange>,
 *   keyLines: Record<string, number[][][]>,
 *   contracts: Record<string, Contract[]>,
 *   errors: string[],
 * }} CheckedSource
 */

/**
 * Checks every marker of `sources` against the table and resolves what the widget shows.
 * @param {Record<string, string>} sources every scanned file: path relative to the repository -> text
 * @param {Record<string, SectionSpec>} table sections by id (sections.mjs)
 * @param {Operation[]} operations the widget's list (sections.mjs)
 * @returns {CheckedSource} files holds only the files some section lives in; keyLines[op][view][note]
 *   lists the lines each key-line note points at; contracts[section] the shape contracts of its functions
 */
export function checkSources(sources, table, operations) {
  /** @type {string[]} */
  const errors = [];
  /** @type {Map<string, MarkerPair[]>} */
  const found = new Map();
  /** @type {Set<string>} */
  const unpaired = new Set();
  for (const [file, text] of Object.entries(sources)) {
    const parsed = parseMarkers(file, text);
    errors.push(...parsed.errors);
    for (const id of parsed.unpaired) unpaired.add(id);
    for (const pair of parsed.pairs) found.set(pair.id, [...(found.get(pair.id) ?? []), pair]);
  }

  /** @type {Record<string, SectionRange>} */
  const sections = {};
  /** @type {Record<string, string>} */
  const files = {};
  for (const [id, pairs] of found) {
    if (!(id in table)) {
      const at = pairs.map((p) => `${p.file}:${p.openLine}`).join(', ');
      errors.push(`${at}: section ${id} is not in web/src/source/sections.mjs; add it there or remove the markers`);
    }
    if (pairs.length > 1)
      errors.push(`section ${id} is marked ${pairs.length} times (${pairs.map((p) => `${p.file}:${p.openLine}`).join(', ')}); ids must be unique`);
  }
  for (const [id, spec] of Object.entries(table)) {
    const pairs = found.get(id);
    if (!(spec.file in sources)) {
      errors.push(`section ${id}: its file ${spec.file} is not among the scanned sources (${SCANNED_FOLDERS.join(', ')})`);
      continue;
    }
    if (!pairs) {
      if (unpaired.has(id)) continue;  // its lone marker is reported already
      errors.push(`section ${id}: no markers found; put "// [anatomy:${id}]" before and "// [/anatomy:${id}]" after its lines in ${spec.file}`);
      continue;
    }
    if (pairs.length > 1) continue;  // reported above
    const [pair] = pairs;
    if (pair.file !== spec.file) {
      errors.push(`${pair.file}:${pair.openLine}: section ${id} belongs in ${spec.file} according to sections.mjs`);
      continue;
    }
    const range = { file: spec.file, startLine: pair.openLine + 1, endLine: pair.closeLine - 1 };
    const lines = sources[spec.file].split('\n');
    for (const needle of spec.contains)
      if (linesContaining(lines, [range], needle).length === 0)
        errors.push(`${spec.file}:${range.startLine}-${range.endLine}: section ${id} must contain "${needle}", but ${whereElse(lines, needle)}`);
    sections[id] = range;
    files[spec.file] = sources[spec.file];
  }

  /** @type {Record<string, number[][][]>} */
  const keyLines = {};
  const shown = new Set();
  const opIds = new Set();
  for (const op of operations) {
    if (opIds.has(op.id)) errors.push(`operation ${op.id} is listed twice in sections.mjs`);
    opIds.add(op.id);
    if (op.views.length === 0) errors.push(`operation ${op.id} has no view`);
    keyLines[op.id] = op.views.map((view, v) => {
      const where = `operation ${op.id}, view ${v + 1} ("${view.label}")`;
      for (const id of view.sections) {
        shown.add(id);
        if (!(id in table)) errors.push(`${where}: unknown section ${id}`);
      }
      const fileSet = new Set(view.sections.map((id) => table[id]?.file));
      if (view.sections.length === 0 || fileSet.size !== 1) {
        errors.push(`${where}: a view shows one or more sections of one file (got ${[...fileSet].join(', ') || 'none'})`);
        return view.notes.map(() => []);
      }
      const ranges = view.sections.flatMap((id) => (sections[id] ? [sections[id]] : []));
      if (ranges.length !== view.sections.length) return view.notes.map(() => []);  // a section error is already reported
      const file = ranges[0].file;
      const lines = sources[file].split('\n');
      return view.notes.map((note) => {
        const at = linesContaining(lines, ranges, note.match);
        if (at.length === 0)
          errors.push(`${where}: key line "${note.match}" is not inside ${view.sections.join(' + ')} in ${file}; ${whereElse(lines, note.match)}`);
        return at;
      });
    });
  }
  for (const id of Object.keys(table))
    if (!shown.has(id)) errors.push(`section ${id} is marked but no operation in sections.mjs shows it`);

  const { contracts, errors: contractErrors } = findContracts(sources, table, sections);
  errors.push(...contractErrors);
  return { files, sections, keyLines, contracts, errors };
}

/** A line at column 0 that starts a function (a definition in a .cpp, a declaration in a header): group 1 is its name. */
const FUNCTION_START = /^(?![\s/#}]|template\b|namespace\b|return\b)[^=;(]*?\b([A-Za-z_]\w*)\s*\(/;

/**
 * @typedef {{ name: string, header: string, line: number, shapes: string[] }} Contract
 *   shapes: the `// x: [..] -> [..]` lines of the function's declaration comment, spaces collapsed
 */

/**
 * The shape contract of each function defined in the sections: the lines with `->` and a
 * shape (`[`) in the comment above its declaration, in the header next to the section's
 * .cpp. A function defined in a section and declared in that header must have one, unless
 * the section lists it in `noContract` (with the reason); a file-local helper has none.
 * @param {Record<string, string>} sources
 * @param {Record<string, SectionSpec>} table
 * @param {Record<string, SectionRange>} sections the located sections
 * @returns {{ contracts: Record<string, Contract[]>, errors: string[] }}
 */
export function findContracts(sources, table, sections) {
  /** @type {string[]} */
  const errors = [];
  /** @type {Record<string, Contract[]>} */
  const contracts = {};
  for (const [id, range] of Object.entries(sections)) {
    const exempt = table[id].noContract ?? {};
    const header = range.file.replace(/\.cpp$/, '.hpp');
    const lines = sources[range.file].split('\n');
    const defined = new Set();
    for (let n = range.startLine; n <= range.endLine; n += 1) {
      const match = FUNCTION_START.exec(lines[n - 1]);
      if (match && !lines[n - 1].trimEnd().endsWith(';')) defined.add(match[1]);
    }
    for (const name of Object.keys(exempt))
      if (!defined.has(name)) errors.push(`section ${id}: noContract names ${name}, which the section does not define`);
    contracts[id] = [];
    if (header === range.file || !(header in sources)) continue;
    const headerLines = sources[header].split('\n');
    for (const name of defined) {
      const at = headerLines.findIndex((line) => FUNCTION_START.exec(line)?.[1] === name);
      if (at < 0) continue;  // not declared in the header: a helper of the .cpp
      let above = at - 1;
      while (above >= 0 && /^template\b/.test(headerLines[above])) above -= 1;
      const comment = [];
      for (; above >= 0 && /^\s*\/\//.test(headerLines[above]); above -= 1) comment.unshift(headerLines[above]);
      const shapes = comment
        .map((line) => line.replace(/^\s*\/\/\s*/, '').replace(/\s+/g, ' ').trim())
        .filter((text) => text.includes('->') && text.slice(text.indexOf('->')).includes('['))
        // A contract after prose on the same line: only its "-> [..]" part.
        .map((text) => (text.slice(0, text.indexOf('->')).includes(': [') ? text : text.slice(text.indexOf('->'))));
      const where = `${header}:${at + 1}`;
      if (name in exempt) {
        if (shapes.length) errors.push(`${where}: ${name} has a shape contract now; take it out of noContract in section ${id}`);
        continue;
      }
      if (shapes.length === 0)
        errors.push(
          `${where}: ${name} (defined in section ${id}) has no shape contract in its declaration comment; ` +
            `add a line like "//   x: [B, T, D]  ->  [B, T, D]" above it, or list it in noContract of ${id} in sections.mjs with the reason`,
        );
      else contracts[id].push({ name, header, line: at + 1, shapes });
    }
  }
  return { contracts, errors };
}

/**
 * Reads the core's sources from `repoRoot` and checks them (what the build and the test both run).
 * @param {string} repoRoot the repository root (the folder holding core/ and web/)
 * @param {Record<string, SectionSpec>} table
 * @param {Operation[]} operations
 * @returns {CheckedSource & { scanned: string[] }} scanned: the absolute paths read
 */
export function loadAnatomySource(repoRoot, table, operations) {
  /** @type {Record<string, string>} */
  const sources = {};
  const scanned = [];
  for (const folder of SCANNED_FOLDERS) {
    const names = readdirSync(join(repoRoot, folder), { withFileTypes: true })
      .filter((entry) => entry.isFile() && /\.(cpp|hpp)$/.test(entry.name))
      .map((entry) => entry.name)
      .sort();
    for (const name of names) {
      const path = join(repoRoot, folder, name);
      sources[`${folder}/${name}`] = readFileSync(path, 'utf8');
      scanned.push(path);
    }
  }
  return { ...checkSources(sources, table, operations), scanned };
}

/**
 * One message for a failed check, listing every problem.
 * @param {string[]} errors
 */
export function describeErrors(errors) {
  return (
    `The source reader's section markers in the C++ core do not match web/src/source/sections.mjs ` +
    `(${errors.length} problem${errors.length === 1 ? '' : 's'}):\n` +
    errors.map((e) => `  - ${e}`).join('\n')
  );
}
