// Types of character-ids.mjs (plain JavaScript so that Node runs it without a build step).
export declare class CharacterError extends Error {}
export interface CharacterVocabulary {
  bos: number;
  size: number;                 // characters, BOS not counted
  ids(text: string): number[];  // [BOS, one id per code point]
}
export declare function characterVocabulary(tokenizer: unknown, maxCharacters: number): CharacterVocabulary;
