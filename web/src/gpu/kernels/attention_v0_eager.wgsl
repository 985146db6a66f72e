// v0 eager: the core's reference (core/ops/attention.cpp) step for step, one pass per
// step, the score matrix [B, Hq, T, S] in a buffer between them:
//   1. scores  = q k^T / sqrt(D)       one invocation per cell
//   2. masked  = scores where visible, the lowest f32 elsewhere
//   3. probs   = softmax of each row (with the head's sink logit, if any)
//   4. out     = probs @ v             one invocation per output element
// No tiling: every invocation reads global memory. It is the kernel the others are
// checked beside, and the one that writes the probabilities.
// Measured speed (`node web/bench/webgpu-attention.mjs`, docs/gpu.md, B 1, Hq 32, Hkv 4,
// D 64, causal, f32): on SwiftShader (software, 2 CPU cores) 1,366 ms at T = 256 and
// 20,605 ms at T = 1,024, 3.3 to 4.1 times v1 flash's.

@group(0) @binding(0) var<uniform> shape: Shape;
@group(0) @binding(1) var<storage, read> q: array<f32>;
@group(0) @binding(2) var<storage, read> k: array<f32>;
@group(0) @binding(3) var<storage, read> v: array<f32>;
@group(0) @binding(4) var<storage, read> sinks: array<f32>;
@group(0) @binding(5) var<storage, read> ranges: array<vec4<i32>>;
@group(0) @binding(6) var<storage, read_write> scores: array<f32>;  // [B, Hq, T, S]
@group(0) @binding(7) var<storage, read_write> probs: array<f32>;   // [B, Hq, T, S]
@group(0) @binding(8) var<storage, read_write> out: array<f32>;     // [B, Hq, T, D]

// The flat index of this invocation over a grid of (x, y) workgroups of 64.
fn flat_index(id: vec3<u32>, groups: vec3<u32>) -> u32 {
  return id.x + id.y * groups.x * 64u;
}

// 1. One cell (b, h, t, s): the dot product of query t and key s, scaled.
@compute @workgroup_size(64)
fn scores_pass(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let cell = flat_index(id, groups);
  if (cell >= shape.B * shape.Hq * shape.T * shape.S) { return; }
  let s = cell % shape.S;
  let row = cell / shape.S;            // (b * Hq + h) * T + t
  let h = (row / shape.T) % shape.Hq;
  let b = row / (shape.T * shape.Hq);
  let kv_head = h / shape.group;
  let q_at = row * shape.D;
  let k_at = ((b * shape.Hkv + kv_head) * shape.S + s) * shape.D;
  var dot = 0.0;
  for (var d = 0u; d < shape.D; d++) { dot += q[q_at + d] * k[k_at + d]; }
  scores[cell] = dot * shape.scale;
}

// 2. One cell: kept where the query may see the key, the lowest f32 where it may not.
@compute @workgroup_size(64)
fn mask_pass(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let cell = flat_index(id, groups);
  if (cell >= shape.B * shape.Hq * shape.T * shape.S) { return; }
  let s = cell % shape.S;
  let t = (cell / shape.S) % shape.T;
  if (!sees(ranges[t], s)) { scores[cell] = lowest; }
}

// 3. One row: subtract the row's maximum (the sink's logit included), exponentiate,
// divide by the sum (the sink's term included). A row with no visible key and no sink
// is all zeros, as in the core.
@compute @workgroup_size(64)
fn softmax_pass(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let row = flat_index(id, groups);
  if (row >= shape.B * shape.Hq * shape.T) { return; }
  let h = (row / shape.T) % shape.Hq;
  let at = row * shape.S;
  var m = lowest;
  for (var s = 0u; s < shape.S; s++) { m = max(m, scores[at + s]); }
  if (shape.has_sinks == 1u) { m = max(m, sinks[h]); }
  if (m == lowest) {
    for (var s = 0u; s < shape.S; s++) { probs[at + s] = 0.0; }
    return;
  }
  var sum = 0.0;
  for (var s = 0u; s < shape.S; s++) { sum += exp(scores[at + s] - m); }
  if (shape.has_sinks == 1u) { sum += exp(sinks[h] - m); }
  for (var s = 0u; s < shape.S; s++) { probs[at + s] = exp(scores[at + s] - m) / sum; }
}

// 4. One output element (b, h, t, d): the row's probabilities times column d of V.
@compute @workgroup_size(64)
fn weighted_sum_pass(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let element = flat_index(id, groups);
  if (element >= shape.B * shape.Hq * shape.T * shape.D) { return; }
  let d = element % shape.D;
  let row = element / shape.D;
  let h = (row / shape.T) % shape.Hq;
  let b = row / (shape.T * shape.Hq);
  let v_at = (b * shape.Hkv + h / shape.group) * shape.S * shape.D + d;
  var sum = 0.0;
  for (var s = 0u; s < shape.S; s++) { sum += probs[row * shape.S + s] * v[v_at + s * shape.D]; }
  out[element] = sum;
}
