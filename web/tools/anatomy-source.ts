// Vite plugin: the C++ core's marked source as the module `virtual:anatomy-source`
// (see src/source/virtual-anatomy-source.d.ts), each file's text a module of its own. It reads core/*.{cpp,hpp},
// core/model/*.{cpp,hpp} and core/ops/*.{cpp,hpp} at build time, checks every `// [anatomy:id]` marker against
// src/source/sections.mjs with the same code as the ctest `source_markers`, and
// fails the build with the full list of problems if any marker is missing,
// unpaired, duplicated or no longer around the code it names, or if a marked
// function's header lost its shape contract.
import type { Plugin } from 'vite';
import { describeErrors, loadAnatomySource } from '../src/source/markers.mjs';
import { OPERATIONS, SECTIONS } from '../src/source/sections.mjs';

const publicId = 'virtual:anatomy-source';
const resolvedId = '\0virtual:anatomy-source';
// One module per source file, `virtual:anatomy-source/core/ops/rope.cpp`, imported when
// the reader shows that file: the chapter loads the text of the files it opens only.
const filePrefix = 'virtual:anatomy-source/';

/** `repoRoot` is the folder that holds core/. */
export function anatomySource(repoRoot: string): Plugin {
  return {
    name: 'anatomy-source',
    // Check once at the start, so a broken marker fails the build even before any page imports the module.
    buildStart() {
      const { errors } = loadAnatomySource(repoRoot, SECTIONS, OPERATIONS);
      if (errors.length > 0) this.error(describeErrors(errors));
    },
    resolveId(id) {
      if (id === publicId) return resolvedId;
      return id.startsWith(filePrefix) ? `\0${id}` : undefined;
    },
    load(id) {
      if (id !== resolvedId && !id.startsWith(`\0${filePrefix}`)) return undefined;
      const { files, sections, keyLines, contracts, errors, scanned } = loadAnatomySource(repoRoot, SECTIONS, OPERATIONS);
      for (const path of scanned) this.addWatchFile(path);  // the dev server reloads when the core changes
      if (errors.length > 0) this.error(describeErrors(errors));
      if (id !== resolvedId) {
        const file = id.slice(filePrefix.length + 1);
        if (!(file in files)) this.error(`anatomy-source: ${file} is not one of the marked files`);
        return `export default ${JSON.stringify(files[file])};`;
      }
      const loaders = Object.keys(files).map((file) =>
        `${JSON.stringify(file)}: () => import(${JSON.stringify(filePrefix + file)}).then((m) => m.default)`);
      return `export default { files: {\n${loaders.join(',\n')}\n}, ...${JSON.stringify({ sections, keyLines, contracts })} };`;
    },
  };
}
