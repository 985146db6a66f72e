// Types of checkpoint-load.mjs (plain JavaScript so that Node runs it without a build step).

export interface CheckpointFiles {
  config: string;           // config.json
  model: Uint8Array;        // model.safetensors
  tokenizer: string;        // tokenizer.json
}

export declare function loadCheckpoint(
  session: { load(config: unknown, model: Uint8Array, header: unknown, tokenizer: unknown): string },
  files: CheckpointFiles,
): string;
