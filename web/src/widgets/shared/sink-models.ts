// The trained models the notebook's sinks section runs (the StreamingLLM figure and the
// sink scores), each a folder attn train wrote under web/public/models/ with the record
// of how it was made, and the published Qwen3 measurement they are set beside.

export interface ShippedModel {
  id: string;
  dir: string;
  label: string;
}

export const sinkModels: ShippedModel[] = [
  { id: 'shakespeare', dir: './models/shakespeare', label: 'Shakespeare, 2 layers of 4 heads (chapter 1\'s)' },
  { id: 'shakespeare-4-layers', dir: './models/shakespeare-4-layers', label: 'Shakespeare, 4 layers, no repeated strings (the sink experiment\'s)' },
  { id: 'shakespeare-learned-sinks', dir: './models/shakespeare-learned-sinks', label: 'the same 4 layers with learned sink logits' },
];

// Qwen3-0.6B, a 29-token prompt: the mean weight the second half of the queries give
// position 0, by layer (published, not measured here; notebook.html#sinks quotes it and
// its references list gives the source).
export const qwen3SinksSource = 'the "Attention" chapter of the notebook LLM Internals: Anatomy of the Transformer';
export const qwen3Sinks: [number, number][] = [[0, 0.006], [2, 0.028], [6, 0.555], [13, 0.426], [20, 0.677], [27, 0.769]];
