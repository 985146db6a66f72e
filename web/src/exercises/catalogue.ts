// The exercises as the page shows them: one entry per exercise of the judge
// (core/judge/exercises.cpp), with the same ids in the same order. The judge owns
// the test cases and the named mistakes; this file owns the words.
//
// Pure data with no imports, so that tests/exercises/solutions.test.mjs can
// transpile it and check every reference solution against the judge. Code is kept
// in template literals without backticks, backslashes or ${...} inside.

export interface Parameter {
  name: string;
  /** Shape or type, e.g. "[B, H, T, D]" or "boolean". */
  type: string;
  note?: string;
}

export interface ExerciseText {
  /** The judge's id, which is also the name of the function the learner writes. */
  id: string;
  title: string;
  /** HTML: a few short paragraphs in our own words. */
  statement: string;
  parameters: Parameter[];
  returns: Parameter;
  /** The same function in Python (NumPy), judged by tools/judge.py: snake_case names, shapes in a comment. */
  python: string;
  /** What the editor starts with: the signature, shapes in comments, a stub. */
  starter: string;
  /** HTML, opened one at a time on request. */
  hints: string[];
  /** Shown once the learner has passed every test. */
  solution: string;
}

const notImplemented = "  throw new Error('not implemented');";

export const exerciseTexts: ExerciseText[] = [
  {
    id: 'softmax',
    title: 'Softmax that survives large scores',
    statement: `
<p>Write <code>softmax(x)</code> for a two-dimensional array <code>x</code> of shape <code>[R, C]</code>. Each row
becomes <code>C</code> positive weights that sum to 1: weight <code>j</code> of a row is
<code>exp(x[j]) / (exp(x[0]) + … + exp(x[C-1]))</code>.</p>
<p>Two kinds of row must come out right. Rows of values around 1000: <code>Math.exp(1000)</code> is
<code>Infinity</code> in double precision, and <code>Infinity / Infinity</code> is <code>NaN</code>. And rows holding
<code>-Infinity</code>, which is how attention marks a key that may not be read: such an entry gets weight exactly 0.</p>`,
    parameters: [{ name: 'x', type: '[R, C]', note: 'numbers, some of them -Infinity' }],
    returns: { name: 'weights', type: '[R, C]', note: 'each row sums to 1' },
    python: `def softmax(x: np.ndarray) -> np.ndarray:
    # x [R, C] -> [R, C]`,
    starter: `// x: [R, C]. Returns [R, C]: the softmax of each row.
function softmax(x) {
${notImplemented}
}
`,
    hints: [
      'Subtracting one number <code>c</code> from every entry of a row leaves its softmax unchanged: the factor <code>exp(-c)</code> appears in the numerator and in the denominator, and cancels.',
      'Take <code>c</code> to be the row’s maximum. The largest exponent is then 0, nothing overflows, and <code>Math.exp(-Infinity)</code> is 0, so masked entries need no special case.',
      'Normalise along each row, the last axis: <code>x.map((row) =&gt; …)</code> keeps you there.',
    ],
    solution: `// Softmax of each row of x [R, C]. Subtracting the row's maximum first keeps
// every exponent <= 0, so nothing overflows; exp(-Infinity) = 0 masks an entry.
function softmax(x) {
  return x.map((row) => {
    const max = Math.max(...row);
    const exps = row.map((value) => Math.exp(value - max));
    const sum = exps.reduce((total, e) => total + e, 0);
    return exps.map((e) => e / sum);
  });
}
`,
  },
  {
    id: 'softmaxWithSink',
    title: 'Softmax with a sink',
    statement: `
<p>Some models (gpt-oss among them) give each attention head a learned <em>sink</em>: one more logit in every
softmax row, with no value behind it. A row can then put part of its weight on "nothing", and its real weights
sum to less than 1. Write <code>softmaxWithSink(x, sink)</code> for scores <code>x</code> of shape <code>[R, C]</code>
and one number <code>sink</code>: weight <code>j</code> of a row is
<code>exp(x[j]) / (exp(sink) + exp(x[0]) + … + exp(x[C-1]))</code>, and the result has the <code>C</code> keys'
weights only.</p>
<p>As in the plain softmax, rows of scores around 1000 must not overflow and <code>-Infinity</code> marks a key that
may not be read. A row whose keys are all <code>-Infinity</code> gives every key exactly 0: the sink takes the whole row.</p>`,
    parameters: [
      { name: 'x', type: '[R, C]', note: 'scores, some of them -Infinity' },
      { name: 'sink', type: 'number', note: 'the head\'s sink logit' },
    ],
    returns: { name: 'weights', type: '[R, C]', note: 'each row sums to 1 minus the sink\'s share' },
    python: `def softmax_with_sink(x: np.ndarray, sink: float) -> np.ndarray:
    # x [R, C], sink a number -> [R, C]`,
    starter: `// x: [R, C]; sink: a number. Returns [R, C]: each row's softmax with the sink as one more
// column in the sum, the sink's own column left out.
function softmaxWithSink(x, sink) {
${notImplemented}
}
`,
    hints: [
      'Treat the sink as one more score at the end of the row. Compute the softmax over the <code>C + 1</code> numbers, then drop the last one.',
      'Subtract the largest of the <code>C + 1</code> numbers, the sink included, before <code>Math.exp</code>. If only the keys count, a row of <code>-Infinity</code> has maximum <code>-Infinity</code>, and <code>exp(sink − (−Infinity))</code> is <code>Infinity</code>.',
      'The sink appears in the denominator only: no key gets its share.',
    ],
    solution: `// Softmax of each row of x [R, C] with the sink as one more column that has no value.
// The maximum covers the keys and the sink, so nothing overflows and a row of
// -Infinity keys gives all zeros (the sink takes it all).
function softmaxWithSink(x, sink) {
  return x.map((row) => {
    const max = Math.max(sink, ...row);
    const exps = row.map((value) => Math.exp(value - max));
    const sum = exps.reduce((total, e) => total + e, Math.exp(sink - max));
    return exps.map((e) => e / sum);
  });
}
`,
  },
  {
    id: 'attention',
    title: 'Attention with a cache offset',
    statement: `
<p>Implement scaled dot-product attention, <code>softmax(q·kᵀ / √D + M)·v</code>, for every batch entry
<code>b</code> and head <code>h</code>. The head has <code>T</code> queries and <code>S ≥ T</code> keys and values.</p>
<p>When <code>causal</code> is true, the queries are the <em>last</em> <code>T</code> of the <code>S</code> positions: the
first <code>S − T</code> keys and values were kept from earlier steps in a cache. Query <code>t</code> therefore stands at
position <code>t + (S − T)</code>, and it may read key <code>s</code> only when <code>s ≤ t + (S − T)</code>. When
<code>causal</code> is false, every query reads every key.</p>`,
    parameters: [
      { name: 'q', type: '[B, H, T, D]' },
      { name: 'k', type: '[B, H, S, D]', note: 'S ≥ T' },
      { name: 'v', type: '[B, H, S, D]' },
      { name: 'causal', type: 'boolean' },
    ],
    returns: { name: 'out', type: '[B, H, T, D]' },
    python: `def attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool) -> np.ndarray:
    # q [B, H, T, D]; k, v [B, H, S, D] -> [B, H, T, D]`,
    starter: `// q: [B, H, T, D]; k, v: [B, H, S, D] with S >= T; causal: boolean.
// Returns [B, H, T, D]. Query t stands at position t + (S - T).
function attention(q, k, v, causal) {
${notImplemented}
}
`,
    hints: [
      'Work on one query at a time: its <code>S</code> dot products with the keys form a row of scores. Scale the row, mask it, take its softmax, and sum the <code>S</code> value rows with those weights.',
      'Mask <em>before</em> the softmax by setting forbidden scores to <code>-Infinity</code>. Setting weights to 0 afterwards leaves rows that no longer sum to 1.',
      'Check both ends: with <code>T = S</code> the offset is 0 and you get the usual lower triangle; with <code>T = 1</code> (one new token) the single query reads every key.',
    ],
    solution: `// softmax(q k^T / sqrt(D) + M) v. q [B, H, T, D], k and v [B, H, S, D].
// Query t stands at position t + (S - T); causally it reads keys s <= t + (S - T).
function attention(q, k, v, causal) {
  const T = q[0][0].length, D = q[0][0][0].length, S = k[0][0].length;
  const scale = 1 / Math.sqrt(D);
  return q.map((heads, b) => heads.map((queries, h) => queries.map((query, t) => {
    const keys = k[b][h], values = v[b][h];
    const scores = keys.map((key, s) => {
      if (causal && s > t + (S - T)) return -Infinity;
      let dot = 0;
      for (let d = 0; d < D; d++) dot += query[d] * key[d];
      return dot * scale;
    });
    const weights = softmaxRow(scores);
    const out = new Array(D).fill(0);
    weights.forEach((w, s) => {
      for (let d = 0; d < D; d++) out[d] += w * values[s][d];
    });
    return out;
  })));
}

function softmaxRow(scores) {
  const max = Math.max(...scores);
  const exps = scores.map((x) => Math.exp(x - max));
  const sum = exps.reduce((total, e) => total + e, 0);
  return exps.map((e) => e / sum);
}
`,
  },
  {
    id: 'causalMultiHeadAttention',
    title: 'Causal multi-head attention',
    statement: `
<p>Build a whole causal self-attention layer. Project the input with three matrices, <code>q = x @ wq</code>,
<code>k = x @ wk</code>, <code>v = x @ wv</code>, each stored <code>[in, out]</code> so that
<code>(x @ w)[j] = Σᵢ x[i]·w[i][j]</code>.</p>
<p>Split the <code>d</code> channels of each position into <code>nHeads</code> heads of <code>dh = d / nHeads</code>:
channel <code>h·dh + j</code> is channel <code>j</code> of head <code>h</code>. Run causal attention in every head
(no cache here: <code>T = S</code>), put the heads of each position back side by side in head order, and project the
result with <code>wo</code>.</p>`,
    parameters: [
      { name: 'x', type: '[B, T, d]' },
      { name: 'wq, wk, wv, wo', type: '[d, d]', note: 'stored [in, out]' },
      { name: 'nHeads', type: 'integer', note: 'divides d' },
    ],
    returns: { name: 'out', type: '[B, T, d]' },
    python: `def causal_multi_head_attention(x: np.ndarray, wq: np.ndarray, wk: np.ndarray, wv: np.ndarray,
                                 wo: np.ndarray, n_heads: int) -> np.ndarray:
    # x [B, T, d]; wq, wk, wv, wo [d, d] stored [in, out] -> [B, T, d]`,
    starter: `// x: [B, T, d]; wq, wk, wv, wo: [d, d] stored [in, out]; nHeads divides d.
// Returns [B, T, d].
function causalMultiHeadAttention(x, wq, wk, wv, wo, nHeads) {
${notImplemented}
}
`,
    hints: [
      'Splitting is a reshape to <code>[B, T, H, dh]</code> followed by moving the head axis in front of the positions: <code>[B, H, T, dh]</code>. Without that transpose, one “head” would hold pieces of several positions.',
      'Merging is the exact inverse: back to <code>[B, T, H, dh]</code>, then join the last two axes. With nested arrays, row <code>t</code> is <code>heads[0][t]</code>, then <code>heads[1][t]</code>, and so on.',
      'Inside a head the scores are divided by <code>√dh</code>, the head size, not by <code>√d</code>.',
    ],
    solution: `// Causal multi-head self-attention. x [B, T, d]; w* [d, d] stored [in, out].
function causalMultiHeadAttention(x, wq, wk, wv, wo, nHeads) {
  const q = splitHeads(matmul(x, wq), nHeads); // [B, H, T, dh]
  const k = splitHeads(matmul(x, wk), nHeads);
  const v = splitHeads(matmul(x, wv), nHeads);
  const heads = q.map((qb, b) => qb.map((qh, h) => causalAttention(qh, k[b][h], v[b][h])));
  return matmul(mergeHeads(heads), wo);         // [B, T, d]
}

// [B, T, in] @ [in, out] -> [B, T, out]
function matmul(x, w) {
  return x.map((rows) => rows.map((row) => w[0].map((_, j) => {
    let sum = 0;
    for (let i = 0; i < row.length; i++) sum += row[i] * w[i][j];
    return sum;
  })));
}

// [B, T, H * dh] -> [B, H, T, dh]
function splitHeads(y, H) {
  const dh = y[0][0].length / H;
  return y.map((rows) => Array.from({ length: H }, (_, h) => rows.map((row) => row.slice(h * dh, (h + 1) * dh))));
}

// [B, H, T, dh] -> [B, T, H * dh]
function mergeHeads(z) {
  return z.map((heads) => heads[0].map((_, t) => heads.flatMap((head) => head[t])));
}

// One head, T = S: q, k, v [T, dh] -> [T, dh]
function causalAttention(q, k, v) {
  const dh = q[0].length, scale = 1 / Math.sqrt(dh);
  return q.map((query, t) => {
    const scores = k.map((key, s) => (s <= t ? dot(query, key) * scale : -Infinity));
    const max = Math.max(...scores);
    const exps = scores.map((x) => Math.exp(x - max));
    const sum = exps.reduce((total, e) => total + e, 0);
    const out = new Array(dh).fill(0);
    exps.forEach((e, s) => {
      for (let j = 0; j < dh; j++) out[j] += (e / sum) * v[s][j];
    });
    return out;
  });
}

function dot(a, b) {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i] * b[i];
  return sum;
}
`,
  },
  {
    id: 'slidingWindowAttention',
    title: 'Sliding-window attention',
    statement: `
<p>Causal attention in which each query sees at most <code>window</code> keys: the key at its own position and the
<code>window − 1</code> keys just before it. Mistral and Gemma use masks like this to bound what a layer reads.</p>
<p>As in the attention exercise, the <code>T</code> queries are the last <code>T</code> of <code>S</code> positions, so
query <code>t</code> stands at <code>p = t + (S − T)</code> and reads the keys at positions
<code>p − window + 1</code> to <code>p</code> (those of them that exist). Scores are scaled by <code>1/√D</code>.</p>`,
    parameters: [
      { name: 'q', type: '[B, H, T, D]' },
      { name: 'k, v', type: '[B, H, S, D]', note: 'S ≥ T' },
      { name: 'window', type: 'integer ≥ 1' },
    ],
    returns: { name: 'out', type: '[B, H, T, D]' },
    python: `def sliding_window_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, window: int) -> np.ndarray:
    # q [B, H, T, D]; k, v [B, H, S, D] -> [B, H, T, D]`,
    starter: `// q: [B, H, T, D]; k, v: [B, H, S, D] with S >= T; window >= 1.
// Returns [B, H, T, D]. Query t stands at p = t + (S - T) and reads keys p - window + 1 .. p.
function slidingWindowAttention(q, k, v, window) {
${notImplemented}
}
`,
    hints: [
      'Count on an example before writing the condition: with <code>window = 3</code>, the query at position 5 reads keys 3, 4 and 5. Your test must admit exactly those three.',
      'Measure the window back from the query’s absolute position <code>t + (S − T)</code>, not from <code>t</code>.',
      'A window longer than the sequence changes nothing: the result is ordinary causal attention. One test checks that.',
    ],
    solution: `// Causal attention over the last window positions. q [B, H, T, D], k, v [B, H, S, D].
function slidingWindowAttention(q, k, v, window) {
  const T = q[0][0].length, D = q[0][0][0].length, S = k[0][0].length;
  const scale = 1 / Math.sqrt(D);
  return q.map((heads, b) => heads.map((queries, h) => queries.map((query, t) => {
    const p = t + (S - T); // the query's position
    const scores = k[b][h].map((key, s) => {
      if (s > p || s <= p - window) return -Infinity;
      let dot = 0;
      for (let d = 0; d < D; d++) dot += query[d] * key[d];
      return dot * scale;
    });
    const max = Math.max(...scores);
    const exps = scores.map((x) => Math.exp(x - max));
    const sum = exps.reduce((total, e) => total + e, 0);
    const out = new Array(D).fill(0);
    exps.forEach((e, s) => {
      for (let d = 0; d < D; d++) out[d] += (e / sum) * v[b][h][s][d];
    });
    return out;
  })));
}
`,
  },
  {
    id: 'rmsnorm',
    title: 'RMSNorm',
    statement: `
<p>Llama-family models normalise with RMSNorm rather than LayerNorm. Each vector <code>x[b][t]</code> of
<code>d</code> numbers is divided by its root mean square, and channel <code>i</code> is then scaled by the learned
<code>weight[i]</code>:</p>
<p><code>y[i] = x[i] / sqrt(mean(x²) + eps) · weight[i]</code></p>
<p>Unlike LayerNorm, nothing is subtracted first, and there is no bias.</p>`,
    parameters: [
      { name: 'x', type: '[B, T, d]' },
      { name: 'weight', type: '[d]' },
      { name: 'eps', type: 'number > 0' },
    ],
    returns: { name: 'y', type: '[B, T, d]' },
    python: `def rmsnorm(x: np.ndarray, weight: np.ndarray, eps: float) -> np.ndarray:
    # x [B, T, d]; weight [d] -> [B, T, d]`,
    starter: `// x: [B, T, d]; weight: [d]; eps > 0. Returns [B, T, d].
function rmsnorm(x, weight, eps) {
${notImplemented}
}
`,
    hints: [
      '<code>mean(x²)</code> is the sum of the squares of the <code>d</code> entries, divided by <code>d</code>.',
      '<code>eps</code> goes under the square root. One test uses <code>eps = 0.5</code>, large enough that putting it outside shows.',
      'Do not centre the vector. One test has inputs with a large mean, where centring changes everything.',
    ],
    solution: `// RMSNorm over the last axis. x [B, T, d], weight [d].
function rmsnorm(x, weight, eps) {
  return x.map((rows) => rows.map((row) => {
    const meanSquare = row.reduce((total, value) => total + value * value, 0) / row.length;
    const inverseRms = 1 / Math.sqrt(meanSquare + eps);
    return row.map((value, i) => value * inverseRms * weight[i]);
  }));
}
`,
  },
  {
    id: 'rope',
    title: 'Rotary position embedding (RoPE)',
    statement: `
<p>RoPE tells attention where a token is by rotating pairs of channels of its query and key through an angle that
grows with the position. This exercise uses the <em>half-split</em> pairing of Llama-style checkpoints: for
<code>i &lt; D/2</code>, channel <code>i</code> pairs with channel <code>i + D/2</code>.</p>
<p>At position <code>p</code>, pair <code>i</code> turns by <code>φ = p · theta^(−2i/D)</code>, and the pair
<code>(a, b)</code> becomes <code>(a·cos φ − b·sin φ, a·sin φ + b·cos φ)</code>. <code>positions[t]</code> is the
absolute position of row <code>t</code>; after a cache it does not start at 0.</p>`,
    parameters: [
      { name: 'x', type: '[B, H, T, D]', note: 'D even' },
      { name: 'positions', type: '[T]' },
      { name: 'theta', type: 'number', note: 'the base, often 10000' },
    ],
    returns: { name: 'rotated', type: '[B, H, T, D]' },
    python: `def rope(x: np.ndarray, positions: np.ndarray, theta: float) -> np.ndarray:
    # x [B, H, T, D]; positions [T] (as floats) -> [B, H, T, D]`,
    starter: `// x: [B, H, T, D] with D even; positions: [T]; theta: the base (e.g. 10000).
// Returns [B, H, T, D]: channel i turns with channel i + D/2.
function rope(x, positions, theta) {
${notImplemented}
}
`,
    hints: [
      'Pair 0 turns fastest, by one radian per position; each later pair turns more slowly, down to nearly <code>theta^(−1)</code> radians per position for the last.',
      'The rotation is counter-clockwise: the new first component is <code>a·cos φ − b·sin φ</code>.',
      'Write into a copy of the row. Writing in place and then reading a channel you have already rotated is a classic slip.',
    ],
    solution: `// RoPE, half-split pairing. x [B, H, T, D], positions [T].
function rope(x, positions, theta) {
  return x.map((heads) => heads.map((rows) => rows.map((row, t) => {
    const D = row.length, half = D / 2;
    const out = row.slice();
    for (let i = 0; i < half; i++) {
      const angle = positions[t] * Math.pow(theta, (-2 * i) / D);
      const cos = Math.cos(angle), sin = Math.sin(angle);
      out[i] = row[i] * cos - row[i + half] * sin;
      out[i + half] = row[i] * sin + row[i + half] * cos;
    }
    return out;
  })));
}
`,
  },
  {
    id: 'groupedQueryAttention',
    title: 'Grouped-query attention',
    statement: `
<p>Many current models give the keys and values fewer heads than the queries, which shrinks the KV cache.
Here <code>q</code> has <code>Hq</code> heads and <code>k</code>, <code>v</code> have <code>Hkv</code>, with
<code>Hq</code> a multiple of <code>Hkv</code>.</p>
<p>Consecutive query heads form groups of <code>Hq / Hkv</code> that share one KV head: query head <code>h</code>
reads KV head <code>floor(h / (Hq / Hkv))</code>. The attention is causal with the cache offset: query
<code>t</code> stands at position <code>t + (S − T)</code>.</p>`,
    parameters: [
      { name: 'q', type: '[B, Hq, T, D]' },
      { name: 'k, v', type: '[B, Hkv, S, D]', note: 'Hkv divides Hq, S ≥ T' },
    ],
    returns: { name: 'out', type: '[B, Hq, T, D]' },
    python: `def grouped_query_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    # q [B, Hq, T, D]; k, v [B, Hkv, S, D] -> [B, Hq, T, D]`,
    starter: `// q: [B, Hq, T, D]; k, v: [B, Hkv, S, D]; Hkv divides Hq; S >= T.
// Returns [B, Hq, T, D]. Causal, with query t at position t + (S - T).
function groupedQueryAttention(q, k, v) {
${notImplemented}
}
`,
    hints: [
      'Sharing is an index, not a copy: compute <code>g = Math.floor(h / group)</code> and read <code>k[b][g]</code> and <code>v[b][g]</code>.',
      'With <code>Hq = 4</code> and <code>Hkv = 2</code>, heads 0 and 1 share KV head 0 and heads 2 and 3 share KV head 1. <code>h % Hkv</code> would pair head 0 with head 2 instead.',
      'The rest is the attention exercise: scale by <code>1/√D</code> and mask <code>s &gt; t + (S − T)</code> before the softmax.',
    ],
    solution: `// Causal grouped-query attention. q [B, Hq, T, D], k and v [B, Hkv, S, D].
function groupedQueryAttention(q, k, v) {
  const Hq = q[0].length, T = q[0][0].length, D = q[0][0][0].length;
  const Hkv = k[0].length, S = k[0][0].length;
  const group = Hq / Hkv;
  const scale = 1 / Math.sqrt(D);
  return q.map((heads, b) => heads.map((queries, h) => {
    const g = Math.floor(h / group); // the KV head this query head reads
    return queries.map((query, t) => {
      const scores = k[b][g].map((key, s) => {
        if (s > t + (S - T)) return -Infinity;
        let dot = 0;
        for (let d = 0; d < D; d++) dot += query[d] * key[d];
        return dot * scale;
      });
      const max = Math.max(...scores);
      const exps = scores.map((x) => Math.exp(x - max));
      const sum = exps.reduce((total, e) => total + e, 0);
      const out = new Array(D).fill(0);
      exps.forEach((e, s) => {
        for (let d = 0; d < D; d++) out[d] += (e / sum) * v[b][g][s][d];
      });
      return out;
    });
  }));
}
`,
  },
  {
    id: 'decodeStep',
    title: 'One decode step with a KV cache',
    statement: `
<p>While generating, each sequence adds one token per step. You get that token’s query, key and value
(<code>q</code>, <code>kNew</code>, <code>vNew</code>) and the cache of the <code>S</code> tokens before it
(<code>kCache</code>, <code>vCache</code>).</p>
<p>Append the new key and value to the cache, let the new query attend over all <code>S + 1</code> positions, its
own included, with scores scaled by <code>1/√D</code>, and return <code>{out, kCache, vCache}</code>: the attention
output and the two extended caches.</p>`,
    parameters: [
      { name: 'q', type: '[B, H, 1, D]' },
      { name: 'kCache, vCache', type: '[B, H, S, D]' },
      { name: 'kNew, vNew', type: '[B, H, 1, D]' },
    ],
    returns: { name: '{out, kCache, vCache}', type: '[B, H, 1, D] and [B, H, S + 1, D] twice' },
    python: `def decode_step(q: np.ndarray, k_cache: np.ndarray, v_cache: np.ndarray,
                k_new: np.ndarray, v_new: np.ndarray) -> dict:
    # q, k_new, v_new [B, H, 1, D]; k_cache, v_cache [B, H, S, D]
    # -> {"out": [B, H, 1, D], "k_cache": [B, H, S + 1, D], "v_cache": [B, H, S + 1, D]}`,
    starter: `// q, kNew, vNew: [B, H, 1, D]; kCache, vCache: [B, H, S, D].
// Returns { out: [B, H, 1, D], kCache: [B, H, S + 1, D], vCache: [B, H, S + 1, D] }.
function decodeStep(q, kCache, vCache, kNew, vNew) {
${notImplemented}
}
`,
    hints: [
      'Extend first, attend second: the new token must be able to read its own key.',
      'No mask is needed. The one new query is the last position, and every cached key lies in its past.',
      'The tests compare the caches you return, so return the extended ones. <code>[...rows, ...kNew[b][h]]</code> builds one.',
    ],
    solution: `// One decode step. q, kNew, vNew [B, H, 1, D]; kCache, vCache [B, H, S, D].
function decodeStep(q, kCache, vCache, kNew, vNew) {
  const keys = kCache.map((heads, b) => heads.map((rows, h) => [...rows, ...kNew[b][h]]));     // [B, H, S + 1, D]
  const values = vCache.map((heads, b) => heads.map((rows, h) => [...rows, ...vNew[b][h]]));   // [B, H, S + 1, D]
  const D = q[0][0][0].length, scale = 1 / Math.sqrt(D);
  const out = q.map((heads, b) => heads.map((queries, h) => queries.map((query) => {
    const scores = keys[b][h].map((key) => {
      let dot = 0;
      for (let d = 0; d < D; d++) dot += query[d] * key[d];
      return dot * scale;
    });
    const max = Math.max(...scores);
    const exps = scores.map((x) => Math.exp(x - max));
    const sum = exps.reduce((total, e) => total + e, 0);
    const result = new Array(D).fill(0);
    exps.forEach((e, s) => {
      for (let d = 0; d < D; d++) result[d] += (e / sum) * values[b][h][s][d];
    });
    return result;
  })));
  return { out, kCache: keys, vCache: values };
}
`,
  },
  {
    id: 'swiglu',
    title: 'The SwiGLU feed-forward block',
    statement: `
<p>After attention, each position goes through a feed-forward block on its own. Llama-style models use SwiGLU: two
projections of <code>x</code> to a hidden width <code>F</code>, one of them passed through
<code>silu(a) = a / (1 + e^(−a))</code> to act as a gate on the other, then a projection back to <code>d</code>:</p>
<p><code>(silu(x @ wGate) ⊙ (x @ wUp)) @ wDown</code></p>
<p>where <code>⊙</code> multiplies entry by entry and every matrix is stored <code>[in, out]</code>.</p>`,
    parameters: [
      { name: 'x', type: '[B, T, d]' },
      { name: 'wGate, wUp', type: '[d, F]' },
      { name: 'wDown', type: '[F, d]' },
    ],
    returns: { name: 'out', type: '[B, T, d]' },
    python: `def swiglu(x: np.ndarray, w_gate: np.ndarray, w_up: np.ndarray, w_down: np.ndarray) -> np.ndarray:
    # x [B, T, d]; w_gate, w_up [d, F]; w_down [F, d] -> [B, T, d]`,
    starter: `// x: [B, T, d]; wGate, wUp: [d, F]; wDown: [F, d]. Returns [B, T, d].
function swiglu(x, wGate, wUp, wDown) {
${notImplemented}
}
`,
    hints: [
      'Matrices are stored <code>[in, out]</code>: <code>(x @ w)[j] = Σᵢ x[i]·w[i][j]</code>. One helper that multiplies <code>[B, T, in]</code> by <code>[in, out]</code> serves all three projections.',
      '<code>silu(a)</code> is <code>a</code> times <code>sigmoid(a)</code>, and it is applied to <code>x @ wGate</code> only.',
    ],
    solution: `// SwiGLU: (silu(x @ wGate) * (x @ wUp)) @ wDown. x [B, T, d]; wGate, wUp [d, F]; wDown [F, d].
function swiglu(x, wGate, wUp, wDown) {
  const gate = matmul(x, wGate), up = matmul(x, wUp); // [B, T, F]
  const hidden = gate.map((rows, b) => rows.map((row, t) => row.map((a, f) => (a / (1 + Math.exp(-a))) * up[b][t][f])));
  return matmul(hidden, wDown);                       // [B, T, d]
}

// [B, T, in] @ [in, out] -> [B, T, out]
function matmul(x, w) {
  return x.map((rows) => rows.map((row) => w[0].map((_, j) => {
    let sum = 0;
    for (let i = 0; i < row.length; i++) sum += row[i] * w[i][j];
    return sum;
  })));
}
`,
  },
  {
    id: 'onlineSoftmaxAttention',
    title: 'Attention with an online softmax',
    statement: `
<p>FlashAttention never holds a whole row of scores. It walks through the keys in blocks and keeps, for each
query, three running values: the largest score so far <code>m</code>, the sum <code>l</code> of
<code>exp(score − m)</code>, and an accumulator of <code>exp(score − m)·v</code>. When a block raises the maximum
to <code>m′</code>, the old sum and accumulator are multiplied by <code>exp(m − m′)</code>, so that everything is
measured against the same maximum. At the end, the output is the accumulator divided by <code>l</code>.</p>
<p>Compute causal attention this way, with the cache offset (query <code>t</code> at position
<code>t + (S − T)</code>), taking the keys <code>blockSize</code> at a time; the last block may be shorter. The
result must equal ordinary causal attention.</p>`,
    parameters: [
      { name: 'q', type: '[B, H, T, D]' },
      { name: 'k, v', type: '[B, H, S, D]', note: 'S ≥ T' },
      { name: 'blockSize', type: 'integer ≥ 1' },
    ],
    returns: { name: 'out', type: '[B, H, T, D]' },
    python: `def online_softmax_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, block_size: int) -> np.ndarray:
    # q [B, H, T, D]; k, v [B, H, S, D] -> [B, H, T, D]`,
    starter: `// q: [B, H, T, D]; k, v: [B, H, S, D]; keys are visited blockSize at a time.
// Returns [B, H, T, D], equal to causal attention with query t at position t + (S - T).
function onlineSoftmaxAttention(q, k, v, blockSize) {
${notImplemented}
}
`,
    hints: [
      'Start each query with <code>m = -Infinity</code>, <code>l = 0</code> and an accumulator of <code>D</code> zeros. For each block: score its keys (masked ones are <code>-Infinity</code>), set <code>m′ = max(m, block maximum)</code>, multiply <code>l</code> and the accumulator by <code>exp(m − m′)</code>, then add <code>exp(score − m′)</code> and <code>exp(score − m′)·v</code> for each key of the block.',
      'If every score so far is masked, <code>m′</code> is still <code>-Infinity</code> and <code>exp(m − m′)</code> is <code>exp(NaN)</code>. Skip such a block.',
      'One test scales the inputs by 40 so that the maximum jumps from block to block; a missing rescale shows up there.',
    ],
    solution: `// Causal attention, keys visited block by block with a running max m and sum l.
// q [B, H, T, D], k and v [B, H, S, D].
function onlineSoftmaxAttention(q, k, v, blockSize) {
  const T = q[0][0].length, D = q[0][0][0].length, S = k[0][0].length;
  const scale = 1 / Math.sqrt(D);
  return q.map((heads, b) => heads.map((queries, h) => queries.map((query, t) => {
    let m = -Infinity, l = 0;
    const acc = new Array(D).fill(0);
    for (let start = 0; start < S; start += blockSize) {
      const end = Math.min(S, start + blockSize);
      const scores = [];
      for (let s = start; s < end; s++) {
        let dot = 0;
        for (let d = 0; d < D; d++) dot += query[d] * k[b][h][s][d];
        scores.push(s <= t + (S - T) ? dot * scale : -Infinity);
      }
      const mNew = Math.max(m, ...scores);
      if (mNew === -Infinity) continue;          // nothing visible yet
      const correction = Math.exp(m - mNew);     // rescale what was summed against m
      l *= correction;
      for (let d = 0; d < D; d++) acc[d] *= correction;
      scores.forEach((score, i) => {
        const p = Math.exp(score - mNew);
        l += p;
        for (let d = 0; d < D; d++) acc[d] += p * v[b][h][start + i][d];
      });
      m = mNew;
    }
    return acc.map((a) => a / l);
  })));
}
`,
  },
  {
    id: 'attentionFlops',
    title: 'Counting attention’s FLOPs',
    statement: `
<p>Count the floating-point operations of one attention layer on <code>T</code> tokens at model width
<code>d</code>, with as many key/value heads as query heads, counting a multiply-add as two operations. Return
three numbers: <code>projections</code>, for the four projections Q, K, V and O together; <code>scores</code>, for
the score matrix <code>Q·Kᵀ</code> over all heads; and <code>weighted</code>, for multiplying the probabilities by
<code>V</code>.</p>
<p>Splitting into heads changes the shapes but not the totals. Once you have the three formulas: for which
<code>T</code> does attention’s own arithmetic overtake the projections?</p>`,
    parameters: [
      { name: 'd', type: 'number', note: 'model width' },
      { name: 'T', type: 'number', note: 'tokens' },
    ],
    returns: { name: '{projections, scores, weighted}', type: 'numbers' },
    python: `def attention_flops(d: int, T: int) -> dict:
    # -> {"projections": int, "scores": int, "weighted": int}`,
    starter: `// d: model width; T: number of tokens. A multiply-add counts as 2 FLOPs.
// Returns { projections, scores, weighted }.
function attentionFlops(d, T) {
  return { projections: 0, scores: 0, weighted: 0 };
}
`,
    hints: [
      'Multiplying an <code>m × k</code> matrix by a <code>k × n</code> matrix takes <code>m·n</code> dot products of length <code>k</code>: <code>2mkn</code> operations.',
      'Each projection is <code>[T, d] @ [d, d]</code>. Per head, <code>Q·Kᵀ</code> is <code>[T, dh] @ [dh, T]</code> and the weighted sum is <code>[T, T] @ [T, dh]</code>; the heads’ <code>dh</code> add up to <code>d</code>.',
      'A check: at <code>d = T = 4096</code> the projections come to about <code>5.5 · 10¹¹</code> operations.',
    ],
    solution: `// FLOPs of one attention layer, a multiply-add counted as 2.
function attentionFlops(d, T) {
  return {
    projections: 4 * (2 * T * d * d), // Q, K, V, O: [T, d] @ [d, d] each
    scores: 2 * T * T * d,            // Q K^T: [T, dh] @ [dh, T] per head, heads summing to d
    weighted: 2 * T * T * d,          // P V: [T, T] @ [T, dh] per head
  };
}
// Attention's own part, 4 T^2 d, overtakes the projections, 8 T d^2, at T = 2d.
`,
  },
];
