// What the source reader shows, and what the build checks about it.
//
// SECTIONS: every marked range of the C++ core, `// [anatomy:id]` ... `// [/anatomy:id]`,
// with the file it must be in and code that must lie inside it. If a marker moves
// off the code it names, the build and the ctest `source_markers` fail. Each function
// a section defines that the header next to its .cpp declares must have a shape
// contract in its declaration comment (`//   q: [B, Hq, T, dh], ...  ->  [B, Hq, T, S]`),
// which the reader shows with the code; `noContract` names the exceptions, with why.
//
// OPERATIONS: the list the reader picks from, in data-flow order. Each operation has
// one or more views (a file with one or more of its sections highlighted) and, per
// view, notes on key lines. A note's `match` is a piece of code that must occur inside
// the view's sections; the lines that contain it are the lines the note is about.
// Text is plain; `backticks` mark code.
//
// Plain JavaScript so that node runs the check without a build step; types in sections.d.mts.

/** @type {Record<string, import('./sections.mjs').SectionSpec>} */
export const SECTIONS = {
  // core/model/decoder_layer.hpp: the order of calls in decoder_layer(), the one block every CPU model runs
  layer_attn_in: { file: 'core/model/decoder_layer.hpp', contains: ['rms_norm(x, w.attn_norm', 'project(h, w.wq, parallel)', 'split_heads(', 'apply_rope('] },
  layer_cache_append: { file: 'core/model/decoder_layer.hpp', contains: ['cache.append(k_rope, v)', 'cache.keys()', 'cache.values()'] },
  layer_attention: { file: 'core/model/decoder_layer.hpp', contains: ['attention_scores_fast(', 'causal_mask(T, S)', 'softmax_rows_fast(', 'weighted_values_fast('] },
  layer_attn_out: { file: 'core/model/decoder_layer.hpp', contains: ['merge_heads(heads)', 'residual_add(x, update)'] },
  layer_ffn: { file: 'core/model/decoder_layer.hpp', contains: ['rms_norm(after_attention', 'swiglu_hidden(', 'residual_add(after_attention'] },
  // core/model/forward.cpp: the tiny model's cache layer, and forward()
  tiny_cache_layer: { file: 'core/model/forward.cpp', contains: ['append_rows(k, k_rope)', 'append_rows(v, v_new)'] },
  forward_inputs: { file: 'core/model/forward.cpp', contains: ['std::iota(', 'embed(model.weights.embedding'] },
  forward_layers: { file: 'core/model/forward.cpp', contains: ['decoder_layer(', 'cache.position +='] },
  forward_head: { file: 'core/model/forward.cpp', contains: ['model.weights.final_norm', 'tied_logits('] },
  // core/model/kv_cache.cpp
  kv_cache: { file: 'core/model/kv_cache.cpp', contains: ['KVCache<Real> empty_cache(', 'Tensor4<Real> append_rows(', 'std::copy_n(fresh.data()'],
    noContract: { empty_cache: 'builds an empty cache from a config; no tensor goes in' } },
  // core/ops/*.cpp: one function per operation
  embedding: { file: 'core/ops/embedding.cpp', contains: ['Tensor3<Real> embed(', 'std::copy'] },
  rms_norm: { file: 'core/ops/rms_norm.cpp', contains: ['Tensor3<Real> rms_norm(', 'std::sqrt'] },
  linear: { file: 'core/ops/linear.cpp', contains: ['Tensor3<Real> linear(', 'matmul_accumulate(x.data(), false, w.data()'] },
  residual_add: { file: 'core/ops/linear.cpp', contains: ['Tensor3<Real> residual_add(', 'x + update'],
    noContract: { residual_add: 'elementwise: its comment says both are [B, T, D]' } },
  split_heads: { file: 'core/ops/heads.cpp', contains: ['Tensor4<Real> split_heads(', 'from_shape({B, H, T, dh})', 'std::copy_n(&x(b, t, h * dh)'] },
  merge_heads: { file: 'core/ops/heads.cpp', contains: ['Tensor3<Real> merge_heads(', 'from_shape({B, T, H * dh})', 'std::copy_n(&x(b, h, t, 0)'] },
  repeat_kv: { file: 'core/ops/heads.cpp', contains: ['Tensor4<Real> repeat_kv(', 'h / std::size_t(group)'] },
  rope: { file: 'core/ops/rope.cpp', contains: ['rope_angles(', 'std::pow(theta', 'Tensor4<Real> apply_rope(', 'a * c - bb * s'],
    noContract: { rope_pair_channels: 'two channel numbers, no tensor' } },
  kv_group: { file: 'core/ops/attention.cpp', contains: ['std::size_t kv_group(', 'n_query_heads / n_kv_heads'],
    noContract: { kv_group: 'two head counts in, one count out; no tensor' } },
  causal_mask: { file: 'core/ops/attention.cpp', contains: ['Mask causal_mask(', 'causal_allows('] },
  attention_scores: { file: 'core/ops/attention.cpp', contains: ['Tensor4<Real> attention_scores(', 'h / group', 'std::sqrt'] },
  apply_mask: { file: 'core/ops/attention.cpp', contains: ['Tensor4<Real> apply_mask(', 'infinity()'] },
  softmax_rows: { file: 'core/ops/attention.cpp', contains: ['Tensor4<Real> softmax_rows(', 'in[s] - row_max'] },
  weighted_values: { file: 'core/ops/attention.cpp', contains: ['Tensor4<Real> weighted_values(', 'h / group', 'p_row[s] * v_head[s * dh + d]'] },
  swiglu: { file: 'core/ops/swiglu.cpp', contains: ['Tensor3<Real> silu(', 'Tensor3<Real> swiglu_hidden(', 'Tensor3<Real> swiglu(', 'gate * up'],
    noContract: { silu: 'elementwise: the shape of its input' } },
  tied_logits: { file: 'core/ops/logits.cpp', contains: ['Tensor3<Real> tied_logits(', 'x_row[d] * e_row[d]'] },
};

/** @type {import('./sections.mjs').Operation[]} */
export const OPERATIONS = [
  {
    id: 'embedding',
    short: 'Embedding',
    title: 'Embedding lookup',
    summary:
      'The first step turns each token id into a vector by copying row `id` of the embedding table E, which is [V, D] (32 × 32 here). Nothing is multiplied: the same id always fetches the same row, wherever it sits in the sequence, so position and context have to come in later, through RoPE and attention.',
    views: [
      {
        label: 'Definition',
        sections: ['embedding'],
        notes: [
          { match: 'Tensor3<Real> x({B, T, D});', note: 'One D-wide row per token: ids [B, T] become x [B, T, D].' },
          {
            match: 'if (id < 0 || std::size_t(id) >= V)',
            note: 'An id outside [0, V − 1] is rejected here, where the bad input enters, with a message naming the id, instead of reading past the end of the table.',
          },
          {
            match: 'std::copy(row, row + D',
            note: 'The lookup itself: copy the D numbers of row `id`, which start at `id * D` in the row-major table, to position (b, t).',
          },
        ],
      },
      {
        label: 'Call in forward()',
        sections: ['forward_inputs'],
        notes: [
          {
            match: 'embed(model.weights.embedding, tokens)',
            note: 'Called once per forward pass, before the layers. Its output x starts the residual stream that every layer adds to.',
          },
        ],
      },
    ],
  },
  {
    id: 'rms_norm',
    short: 'RMSNorm',
    title: 'RMSNorm',
    summary:
      'RMSNorm rescales each token’s vector to a root-mean-square of 1, then multiplies every channel by a learned scale. Unlike LayerNorm it does not subtract the mean and has no bias. Each layer normalises the input of both of its sublayers (pre-norm), and the model normalises once more before the logits.',
    views: [
      {
        label: 'Definition',
        sections: ['rms_norm'],
        notes: [
          {
            match: 'sum_sq += in[d] * in[d]',
            note: 'Sum of squares over the D channels of one token. Each row (b, t) is normalised on its own; tokens never mix here.',
          },
          {
            match: 'std::sqrt(sum_sq / Real(D) + Real(eps))',
            note: 'The root of the mean square. `eps` (1e-6 in the demo model) keeps the division finite for an all-zero row.',
          },
          {
            match: 'in[d] * inv_rms * scale[d]',
            note: 'Divide by the RMS and apply the learned per-channel scale: `attn_norm`, `ffn_norm` or `final_norm`, each of shape [D].',
          },
        ],
      },
      {
        label: 'Calls in decoder_layer()',
        sections: ['layer_attn_in', 'layer_ffn'],
        notes: [
          {
            match: 'rms_norm(x, w.attn_norm',
            note: 'Pre-norm: attention reads a normalised copy h, while x itself goes on unchanged to the residual add.',
          },
          { match: 'rms_norm(after_attention, w.ffn_norm', note: 'The same for the feed-forward sublayer, with its own scale vector.' },
        ],
      },
    ],
  },
  {
    id: 'qkv',
    short: 'Q, K, V projections',
    title: 'Q, K, V projections',
    summary:
      'Three learned matrices turn the normalised input h into queries, keys and values: Q = h·Wq, K = h·Wk, V = h·Wv. Weights are stored [in, out], so each projection reads x @ W, as on paper. With grouped-query attention Wk and Wv are narrower than Wq: [32, 16] instead of [32, 32], because 2 KV heads serve 4 query heads.',
    views: [
      {
        label: 'Calls in decoder_layer()',
        sections: ['layer_attn_in'],
        notes: [
          { match: 'const Tensor3<Real> h = rms_norm', note: 'All three projections read the same normalised h; only their weights differ.' },
          { match: 'project(h, w.wq, parallel)', note: 'Q: [B, T, D] @ [D, Hq·dh] → [B, T, Hq·dh], every query head in one matrix product. `project` reads the tiny model’s [in, out] matrix, or a checkpoint’s [out, in] rows where they lie: the same block runs both.' },
          {
            match: 'c.n_kv_heads)',
            note: 'K and V are split into `n_kv_heads` heads, so they are Hkv·dh = 16 wide, half the width of Q in this model.',
          },
        ],
      },
      {
        label: 'linear() in ops/linear.cpp',
        sections: ['linear'],
        notes: [
          {
            match: 'if (w.shape(0) != in)',
            note: 'A weight of the wrong size is an error with a message, not silently wrong numbers.',
          },
          {
            match: 'const std::size_t rows = x.shape(0) * x.shape(1)',
            note: 'Batch and time are flattened into rows: a projection treats every token alike and on its own.',
          },
          {
            match: 'matmul_accumulate(x.data(), false, w.data()',
            note: 'One blocked matrix product (ops/matmul.cpp) under every projection and training’s backward. Each y[r, j] is summed over i in order, whatever the batch size or how the loop is blocked, so a sequence gives the same bits alone or in a batch, natively and in wasm.',
          },
        ],
      },
    ],
  },
  {
    id: 'split_heads',
    short: 'Split heads',
    title: 'Split heads: reshape and transpose',
    summary:
      'A projection gives one wide vector per token, [B, T, H·dh]. Attention works head by head, so the channels are cut into H heads of dh channels, and the head axis is moved in front of the time axis: [B, H, T, dh]. Each head is then a [T, dh] matrix whose rows are positions.',
    views: [
      {
        label: 'Definition',
        sections: ['split_heads'],
        notes: [
          { match: 'x.shape(2) / H', note: 'dh = width / H: 32 / 4 = 8 for queries, 16 / 2 = 8 for keys and values.' },
          {
            match: 'Reshape [B, T, H*dh] -> [B, T, H, dh]',
            note: 'The reshape only regroups: channels h·dh … h·dh + dh − 1 of each token become head h. Then the T and H axes swap. Why the swap: reshaping straight to [B, H, T, dh] would cut the flat memory into consecutive chunks, so one “head” would hold channels from several positions.',
          },
          {
            match: 'std::copy_n(&x(b, t, h * dh), dh, &out(b, h, t, 0))',
            note: 'Both steps as one copy: head h’s dh channels of position t go to row t of head h. The numbers are only moved, never changed.',
          },
        ],
      },
      {
        label: 'Calls in decoder_layer()',
        sections: ['layer_attn_in'],
        notes: [
          {
            match: 'split_heads(',
            note: 'Applied right after each projection: Q with `n_heads` (4), K and V with `n_kv_heads` (2).',
          },
        ],
      },
    ],
  },
  {
    id: 'rope',
    short: 'RoPE',
    title: 'RoPE',
    summary:
      'Rotary position embedding tells queries and keys where they are by rotating pairs of channels through an angle proportional to the position. Pair i turns at its own frequency θ^(−2i/dh). The dot product of a query at position m with a key at position n then depends on the positions only through m − n. Values are not rotated.',
    views: [
      {
        label: 'Definition',
        sections: ['rope'],
        notes: [
          {
            match: 'std::pow(theta, -2.0 * double(i) / double(head_dim))',
            note: 'The frequency of pair i: 1 for the first pair, ever slower for later ones (θ = `rope_theta` = 10000).',
          },
          {
            match: 'double(positions[t]) * inv_freq',
            note: 'Angle = position × frequency. Positions are absolute: with a cache they continue from the history, which is why forward() passes them in.',
          },
          {
            match: 'if (pairing == RopePairing::half_split)',
            note: 'Which channels form a pair: Hugging Face Llama pairs i with i + dh/2 (half split), the original paper pairs neighbours 2i and 2i + 1. The weights decide which one is right.',
          },
          {
            match: 'xt::cos(angles)',
            note: 'Angles and their cosines are computed in double and rounded once, so float and double runs rotate by the same angles.',
          },
          {
            match: 'a * c - bb * s',
            note: 'A 2-D rotation of the pair (a, b): (a·cos − b·sin, a·sin + b·cos). A rotation keeps each pair’s length.',
          },
        ],
      },
      {
        label: 'Calls in decoder_layer()',
        sections: ['layer_attn_in'],
        notes: [
          {
            match: 'apply_rope(',
            note: 'q and k are rotated with the same positions after the heads are split; v is not. k_rope is what the cache stores, so a cached key is never rotated again.',
          },
        ],
      },
    ],
  },
  {
    id: 'gqa_scores',
    short: 'GQA scores',
    title: 'GQA scores',
    summary:
      'Every query is compared with every key by a dot product scaled by 1/√dh, giving scores [B, Hq, T, S]. With grouped-query attention there are fewer KV heads than query heads: query head h reads KV head h / group, where group = Hq / Hkv (2 here). The sharing is an index into the same memory, never a copy.',
    views: [
      {
        label: 'Definition',
        sections: ['kv_group', 'attention_scores'],
        notes: [
          {
            match: 'return n_query_heads / n_kv_heads;',
            note: 'group = Hq / Hkv query heads share one KV head (4 / 2 = 2); a head count that does not divide is an error.',
          },
          {
            match: 'Real(1.0 / std::sqrt(double(dh)))',
            note: 'Why 1/√dh: a sum of dh products of unit-scale numbers spreads like √dh. Dividing keeps scores at unit scale, so the softmax does not saturate as dh grows.',
          },
          {
            match: '&k(b, h / group, 0, 0)',
            note: 'The GQA line. Integer division sends heads 0 and 1 to KV head 0, heads 2 and 3 to KV head 1. h % Hkv would pair the wrong heads.',
          },
          {
            match: 'for (std::size_t s = 0; s < S; ++s) {',
            note: 'Every query t against every key s: all S keys, the cached ones included. The mask decides later which of these scores count.',
          },
          {
            match: 'dot += q_row[d] * k_row[d]',
            note: 'The dot product of query t with key s, summed over the dh channels in order: a large value means the key matches what the query looks for.',
          },
        ],
      },
      {
        label: 'Call in decoder_layer()',
        sections: ['layer_attention'],
        notes: [
          {
            match: 'attention_scores_fast(q_rope, k_cache)',
            note: 'The grouped path hands over the cache’s Hkv heads as they are. The model runs the _fast version of each step: the same loops, many keys at a time, giving exactly these bits (tests/unit/test_attention_steps.cpp).',
          },
          {
            match: 'repeat_kv(k_cache',
            note: 'The reference path copies each KV head `group` times first; `attn verify` checks that the two paths agree.',
          },
        ],
      },
      {
        label: 'The copy: repeat_kv()',
        sections: ['repeat_kv'],
        notes: [
          {
            match: 'h / std::size_t(group)',
            note: 'The same index, used here to build real copies: [B, Hkv, S, dh] → [B, Hq, S, dh]. It costs `group` times the memory, which is what GQA saves.',
          },
        ],
      },
    ],
  },
  {
    id: 'causal_mask',
    short: 'Causal mask',
    title: 'Causal mask',
    summary:
      'A decoder must not read the future: query t may see key s only if s is not later than t. The mask is a boolean [T, S] matrix. Forbidden scores become −∞ before the softmax, so they get exactly zero probability while the allowed weights still sum to one.',
    views: [
      {
        label: 'Definition',
        sections: ['causal_mask', 'apply_mask'],
        notes: [
          {
            match: 'const std::size_t history = S - T;',
            note: 'With a cache the T new queries sit at positions history … history + T − 1, so the allowed region shifts right by history = S − T.',
          },
          {
            match: 'causal_allows(t, s, history)',
            note: 'The rule, defined in masks.hpp: allowed when s ≤ t + history. A position always sees itself, so no row is empty.',
          },
          {
            match: 'const std::size_t planes = scores.shape(0) * scores.shape(1);',
            note: 'One [T, S] mask serves every sequence and head: it is applied to each of the B·H planes.',
          },
          {
            match: 'allowed.data()[i] ? in[i] : forbidden',
            note: 'Cell by cell: an allowed score passes unchanged, a forbidden one becomes −∞.',
          },
          {
            match: '-std::numeric_limits<Real>::infinity()',
            note: 'Why −∞: exp(−∞) is exactly 0, so a masked key gets no weight and the softmax over the others is untouched. Zeroing probabilities after the softmax instead would leave rows summing to less than one.',
          },
        ],
      },
      {
        label: 'Call in decoder_layer()',
        sections: ['layer_attention'],
        notes: [
          {
            match: 'apply_mask_fast(scores, causal_mask(T, S))',
            note: 'The mask goes on the scores, before the softmax, never on the probabilities. T and S come from the cache a few lines above.',
          },
        ],
      },
    ],
  },
  {
    id: 'softmax',
    short: 'Softmax',
    title: 'Softmax over keys',
    summary:
      'Softmax turns each row of scores (one query against all S keys) into probabilities: exponentiate, then divide by the row sum. It runs over the last axis, the keys. Normalising over queries or heads instead would give rows that do not sum to one.',
    views: [
      {
        label: 'Definition',
        sections: ['softmax_rows'],
        notes: [
          {
            match: 'const std::size_t rows = x.size() / (S ? S : 1);',
            note: 'Every (b, h, t) is one row of S scores; the tensor is walked as rows × S.',
          },
          {
            match: 'if (allowed_keys == 0) {',
            note: 'A row whose keys are all masked would compute 0 / 0 = NaN; it stays all zeros instead. The causal mask never makes such a row, other masks can.',
          },
          { match: 'row_max = row_max < in[s] ? in[s] : row_max', note: 'First, the largest score of the row.' },
          {
            match: 'exponential(in[s] - row_max)',
            note: 'Why subtract the max: softmax is unchanged when a row is shifted by a constant, and after the shift the largest term is exp(0) = 1, so nothing overflows even for huge scores. exponential() is the core’s own e^x (ops/exponential.hpp), so the page and the native tool get the same bits.',
          },
          { match: 'out[s] /= sum', note: 'Divide by the sum: each row now adds up to 1.' },
        ],
      },
      {
        label: 'Call in decoder_layer()',
        sections: ['layer_attention'],
        notes: [{ match: 'softmax_rows_fast(', note: 'Applied to the masked scores; probs keeps the shape [B, Hq, T, S]. The _fast version skips a causal row’s masked tail, whose e^−∞ = 0 adds nothing, and gives the same bits.' }],
      },
    ],
  },
  {
    id: 'weighted_sum',
    short: 'Weighted sum of values',
    title: 'Weighted sum of values',
    summary:
      'Each head’s output at position t is a mixture of value vectors, out[t] = Σₛ p[t, s] · v[s]: the probabilities decide how much each source position hands over. probs [B, Hq, T, S] and v [B, Hkv, S, dh] give [B, Hq, T, dh].',
    views: [
      {
        label: 'Definition',
        sections: ['weighted_values'],
        notes: [
          {
            match: 'const Real* v_head = &v(b, h / group, 0, 0);',
            note: 'The same GQA index as for the keys: query head h mixes the values of KV head h / group.',
          },
          {
            match: 'Real acc = 0;',
            note: 'Output channel d of query t starts at zero and gathers one share per key.',
          },
          {
            match: 'acc += p_row[s] * v_head[s * dh + d]',
            note: 'Add p[t, s] times channel d of value row s. A masked key has p = 0 and adds nothing.',
          },
        ],
      },
      {
        label: 'Call in decoder_layer()',
        sections: ['layer_attention'],
        notes: [
          {
            match: 'weighted_values_fast(probs, v_cache)',
            note: 'Reads the cached values, which already include this pass’s v (appended a few lines earlier).',
          },
        ],
      },
    ],
  },
  {
    id: 'output_projection',
    short: 'Output projection',
    title: 'Output projection: merge heads, then Wo',
    summary:
      'The heads’ outputs are laid side by side again, [B, Hq, T, dh] → [B, T, Hq·dh], and one matrix Wo [Hq·dh, D] maps them back to the residual stream’s D channels. This is the step where the heads’ results are combined.',
    views: [
      {
        label: 'Call in decoder_layer()',
        sections: ['layer_attn_out'],
        notes: [
          {
            match: 'merge_heads(heads)',
            note: 'merge_heads undoes split_heads: [B, Hq, T, dh] → [B, T, Hq·dh].',
          },
          {
            match: 'project(merged, w.wo, parallel)',
            note: 'Then Wo: [B, T, 32] @ [32, 32] → [B, T, 32] in this model.',
          },
        ],
      },
      {
        label: 'merge_heads() in ops/heads.cpp',
        sections: ['merge_heads'],
        notes: [
          {
            match: 'std::copy_n(&x(b, h, t, 0), dh, &out(b, t, h * dh))',
            note: 'Row t of head h goes back to position t, where head h fills channels h·dh … h·dh + dh − 1: the channels split_heads took it from.',
          },
        ],
      },
    ],
  },
  {
    id: 'residual_add',
    short: 'Residual add',
    title: 'Residual add',
    summary:
      'Each sublayer adds its result to its input instead of replacing it: x + attention(norm(x)), then + ffn(norm(·)). The running sum is the residual stream. A layer only writes an update into it, so the original signal, and during training the gradient, passes straight through a deep stack.',
    views: [
      {
        label: 'Calls in decoder_layer()',
        sections: ['layer_attn_out', 'layer_ffn'],
        notes: [
          { match: 'residual_add(x, update)', note: 'After attention: the layer’s input x plus the projected attention update.' },
          {
            match: 'residual_add(after_attention, ffn)',
            note: 'After the feed-forward sublayer: this sum is the layer’s output and the next layer’s input.',
          },
        ],
      },
      {
        label: 'Definition',
        sections: ['residual_add'],
        notes: [{ match: 'return x + update;', note: 'Elementwise sum of two [B, T, D] tensors, evaluated into the returned tensor.' }],
      },
    ],
  },
  {
    id: 'swiglu',
    short: 'SwiGLU',
    title: 'SwiGLU feed-forward',
    summary:
      'The feed-forward sublayer works on each token separately. It widens D to F channels twice (F = 96 here), gates one copy with the other and narrows back: down(silu(x·W_gate) ⊙ (x·W_up)). silu(a) = a · sigmoid(a) is a smooth cousin of ReLU.',
    views: [
      {
        label: 'Definition',
        sections: ['swiglu'],
        notes: [
          { match: 'in[i] / (Real(1) + exponential(-in[i]))', note: 'silu(a) = a / (1 + e^(−a)) = a · sigmoid(a); exponential() is the core’s own e^x, the same bits natively and in wasm.' },
          { match: 'silu(gate_in)', note: 'The gate, x @ W_gate ([B, T, D] @ [D, F] → [B, T, F]), through silu.' },
          { match: 'gate * up', note: 'The gating is an elementwise product: each of the F hidden channels is scaled by its own gate value.' },
          { match: 'linear(hidden, w_down)', note: 'Back to the residual width: [B, T, F] @ [F, D] → [B, T, D].' },
        ],
      },
      {
        label: 'Call in decoder_layer()',
        sections: ['layer_ffn'],
        notes: [
          {
            match: 'swiglu_hidden(gate, up)',
            note: 'The gate and up projections of the normalised h2, gated, then projected back down; the next line adds the result to the residual stream.',
          },
        ],
      },
    ],
  },
  {
    id: 'final_norm',
    short: 'Final norm',
    title: 'Final norm',
    summary:
      'After the last layer the residual stream is normalised once more, with its own scale vector, before it is compared with the vocabulary. Without it the logits’ scale would depend on how much all the layers added to the stream.',
    views: [
      {
        label: 'Call in forward()',
        sections: ['forward_head'],
        notes: [
          {
            match: 'rms_norm(x, model.weights.final_norm',
            note: 'The same RMSNorm as inside the layers, applied to the last layer’s output with `final_norm` [D].',
          },
        ],
      },
      {
        label: 'rms_norm() in ops/rms_norm.cpp',
        sections: ['rms_norm'],
        notes: [{ match: 'std::sqrt', note: 'The function the layers use too: divide by the root-mean-square, then scale.' }],
      },
    ],
  },
  {
    id: 'tied_logits',
    short: 'Tied logits',
    title: 'Tied logits',
    summary:
      'The model scores every vocabulary entry by a dot product of the final state with that token’s embedding row: logits = x · Eᵀ, [B, T, D] → [B, T, V]. Reusing E (“tying”) saves a separate V × D matrix. The logits at position t score the token at t + 1.',
    views: [
      {
        label: 'Definition',
        sections: ['tied_logits'],
        notes: [
          {
            match: 'embedding.data() + v * D',
            note: 'Row v of E is column v of Eᵀ, so no transposed copy is needed: each logit is a dot product with a contiguous row.',
          },
          {
            match: 'dot += x_row[d] * e_row[d]',
            note: 'One logit: how well the final state at this position lines up with token v’s embedding.',
          },
        ],
      },
      {
        label: 'Call in forward()',
        sections: ['forward_head'],
        notes: [
          { match: 'c.tie_embeddings ? tied_logits(', note: 'Used when the config ties the embeddings, as the demo model does.' },
          { match: 'linear(final_normed, model.weights.lm_head)', note: 'Otherwise a separate `lm_head` [D, V] plays the same part.' },
        ],
      },
    ],
  },
  {
    id: 'kv_cache',
    short: 'KV cache',
    title: 'KV cache: append and position counter',
    summary:
      'When tokens are generated one at a time, the keys and values of earlier tokens never change, so each layer keeps them. A step computes q, k, v for its new tokens only, appends k and v to the cache and attends over everything stored. Each layer’s cache is [B, Hkv, S, dh] for keys and the same for values; `cache.position` counts the tokens stored, which is the position of the next one.',
    views: [
      {
        label: 'Append in decoder_layer()',
        sections: ['layer_cache_append'],
        notes: [
          {
            match: 'cache.append(k_rope, v)',
            note: 'Keys are stored after RoPE, so a cached key is never rotated again; values as they come out of the projection. S grows from history to history + T.',
          },
          {
            match: 'S = k_cache.shape(2)',
            note: 'S, the number of keys, is read from the cache: queries attend to every stored key, and the mask allows s ≤ t + (S − T).',
          },
        ],
      },
      {
        label: 'Uses in forward.cpp',
        sections: ['tiny_cache_layer', 'forward_inputs', 'forward_layers'],
        notes: [
          {
            match: 'append_rows(k, k_rope)',
            note: 'The tiny model’s cache layer: each layer’s keys are one tensor [B, Hkv, S, dh] that grows by T rows.',
          },
          { match: 'append_rows(v, v_new)', note: 'The same for the values.' },
          {
            match: 'std::iota(positions.begin(), positions.end(), cache.position)',
            note: 'New tokens get positions history, history + 1, …: RoPE must see the same positions whether a sequence is processed at once or step by step.',
          },
          {
            match: 'cache.position += std::int64_t(T)',
            note: 'The counter moves once per forward pass, after all layers, by the T tokens just processed.',
          },
        ],
      },
      {
        label: 'Definition in kv_cache.cpp',
        sections: ['kv_cache'],
        notes: [
          {
            match: 'std::size_t(config.n_kv_heads), 0',
            note: 'An empty cache has S = 0 rows. Its width is n_kv_heads, not n_heads: GQA shrinks the cache by the group factor.',
          },
          { match: 'to = std::copy_n(fresh.data() + bh * T * dh, T * dh, to);', note: 'Appending is a concatenation along axis 2, the sequence axis: for each sequence and KV head, the S cached rows, then the T new ones.' },
        ],
      },
    ],
  },
];
