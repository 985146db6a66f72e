// Text to ids for attn train's character vocabulary (core/tokenizer/character_vocabulary.hpp):
// "<s>" (BOS) first, then one id per character (Unicode code point), text taken as it
// is. The core's LlamaTokenizer does the same for the other widgets; the first screen's
// small module has no tokenizer, so the page does it here, and
// tests/wasm/first-layer.test.mjs holds the two to the same ids. Plain JavaScript, so
// Node runs it without a build.

export class CharacterError extends Error {}

/** tokenizer.json's vocabulary -> {bos, ids(text)}; ids throws CharacterError for a character it lacks or a text too long. */
export function characterVocabulary(tokenizer, maxCharacters) {
  const vocab = new Map(Object.entries(tokenizer?.model?.vocab ?? {}));
  const bos = vocab.get('<s>');
  if (bos === undefined) throw new CharacterError('tokenizer.json has no <s>: not a vocabulary attn train wrote');
  vocab.delete('<s>');
  return {
    bos,
    size: vocab.size,
    ids(text) {
      const characters = [...text];
      if (characters.length > maxCharacters)
        throw new CharacterError(`at most ${maxCharacters} characters: the model was trained on ${maxCharacters + 1} positions`);
      return [bos, ...characters.map((c) => {
        const id = vocab.get(c);
        if (id === undefined) throw new CharacterError(`the model never saw ${JSON.stringify(c)}: it knows only the ${vocab.size} characters of its training text`);
        return id;
      })];
    },
  };
}
