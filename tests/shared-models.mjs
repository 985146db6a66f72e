// Where the tests find llama2.c's stories260K: ../shared/models/stories260K beside the
// project, read where it lies. Without it a test fails with one line naming the folder,
// unless ANATOMY_NO_SHARED_MODELS=1 says this clone has none: then it prints SKIPPED
// and exits 77 (ctest's SKIP_RETURN_CODE), as tests/cli/test_llama2c.py does.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** { dir, model, tokenizer } of stories260K, or the process ends as described above. */
export function stories260K() {
  let found;
  try {
    found = stories260KOrSkip();
  } catch (error) {
    console.error(error.message);
    process.exit(1);
  }
  if (!found.skip) return found;
  console.log(found.skip);
  process.exit(77);
}

/** For a file that runs among others in one process (tests/browser/group.mjs), which must not
 * end it: { dir, model, tokenizer } of stories260K; or { skip: why } under
 * ANATOMY_NO_SHARED_MODELS=1 without it, for the file to mark its tests skipped; else it
 * throws, naming the folder (that file's suite fails, the others run). */
export function stories260KOrSkip() {
  const dir = path.resolve(repo, '..', 'shared', 'models', 'stories260K');
  const model = path.join(dir, 'stories260K.bin'), tokenizer = path.join(dir, 'tok512.bin');
  if (fs.existsSync(model) && fs.existsSync(tokenizer)) return { dir, model, tokenizer };
  if (process.env.ANATOMY_NO_SHARED_MODELS === '1') return { skip: `SKIPPED: ANATOMY_NO_SHARED_MODELS=1 and ${dir} is not there` };
  throw new Error(`${dir} (stories260K.bin, tok512.bin) is missing: it is read where it lies beside the project; ` +
    'set ANATOMY_NO_SHARED_MODELS=1 to skip this test in a clone without it');
}

/** The Shakespeare corpus in ../shared/corpora, read where it lies: its path; or, under
 * ANATOMY_NO_SHARED_MODELS=1 without it, null after marking the node:test context `t` skipped. */
export function shakespeare(t) {
  const file = path.resolve(repo, '..', 'shared', 'corpora', 'tinyshakespeare.txt');
  if (fs.existsSync(file)) return file;
  if (process.env.ANATOMY_NO_SHARED_MODELS === '1') {
    t.skip(`SKIPPED: ANATOMY_NO_SHARED_MODELS=1 and ${file} is not there`);
    return null;
  }
  throw new Error(`${file} is missing: it is read where it lies beside the project; ` +
    'set ANATOMY_NO_SHARED_MODELS=1 to skip this test in a clone without it');
}
