// v2 decode: one new query per sequence (T = 1) against a long cache, as a model
// generates (flash-decoding). The cache is split into `splits` chunks of `chunk` keys;
// a workgroup takes one chunk of one KV head of one sequence and serves every query
// head of that head's group (CUDA's decode_group): the chunk's keys and values are
// loaded once, into workgroup memory, BC at a time, and invocation i < group folds
// them into query head h = kv_head * group + i's running (m, l, acc) (online_softmax.wgsl). Each chunk's
// (m, l) and acc go to a buffer; a second pass merges the chunks of each head by
// log-sum-exp, folding in the sink's logit:
//   m = max_i m_i;  l = sum_i l_i e^(m_i - m);  out = sum_i acc_i e^(m_i - m) / l
// Key tiles that the query may not see (the core's ranges) are skipped.
// Constants set by the host: BC keys per tile, DH the head size, GROUP_SIZE the
// workgroup's invocations (at least the group, Hq / Hkv).
// Measured speed (`node web/bench/webgpu-attention.mjs`, docs/gpu.md, B 1, Hq 32, Hkv 4,
// D 64, f32): on SwiftShader (software, 2 CPU cores) 24.8 ms over 1,024 keys and 82.2 ms
// over 4,096, 2.8 times faster than v1 flash with one query.

@group(0) @binding(0) var<uniform> shape: Shape;
@group(0) @binding(1) var<storage, read> q: array<f32>;
@group(0) @binding(2) var<storage, read> k: array<f32>;
@group(0) @binding(3) var<storage, read> v: array<f32>;
@group(0) @binding(4) var<storage, read> sinks: array<f32>;
@group(0) @binding(5) var<storage, read> ranges: array<vec4<i32>>;
@group(0) @binding(6) var<storage, read_write> out: array<f32>;            // [B, Hq, 1, D]
@group(0) @binding(7) var<storage, read_write> chunk_ml: array<vec2<f32>>; // [B, Hq, splits]
@group(0) @binding(8) var<storage, read_write> chunk_acc: array<f32>;      // [B, Hq, splits, D]

var<workgroup> k_tile: array<f32, BC * DH>;
var<workgroup> v_tile: array<f32, BC * DH>;
var<workgroup> tile_seen: u32;

// One chunk of keys for every query head of one KV head: workgroup (split, kv_head, b).
@compute @workgroup_size(GROUP_SIZE)
fn decode_chunk(@builtin(workgroup_id) group_id: vec3<u32>, @builtin(local_invocation_index) lane: u32) {
  let split = group_id.x;
  let kv_head = group_id.y;
  let b = group_id.z;
  let h = kv_head * shape.group + lane;
  let serves_head = lane < shape.group;
  let kv_base = (b * shape.Hkv + kv_head) * shape.S * DH;
  let my_ranges = ranges[0];
  var q_row: array<f32, DH>;
  var acc: array<f32, DH>;
  for (var d = 0u; d < DH; d++) {
    acc[d] = 0.0;
    q_row[d] = select(0.0, q[min((b * shape.Hq + h) * DH + d, arrayLength(&q) - 1u)] * shape.scale, serves_head);
  }
  var running = Running(lowest, 0.0);
  let chunk_first = split * shape.chunk;
  let chunk_last = min(shape.S, chunk_first + shape.chunk);
  for (var first = chunk_first; first < chunk_last; first += BC) {
    let last = min(chunk_last, first + BC);
    // The same answer for every invocation, made uniform through workgroup memory
    // (the barrier: every invocation has read the last tile's answer).
    workgroupBarrier();
    if (lane == 0u) { tile_seen = select(0u, 1u, sees_any(my_ranges, first, last)); }
    if (workgroupUniformLoad(&tile_seen) == 1u) {
      load_tile(kv_base, first, last, lane, GROUP_SIZE);
      workgroupBarrier();
      if (serves_head) { fold_tile(&q_row, &acc, &running, my_ranges, first, last, true); }
      workgroupBarrier();
    }
  }
  if (!serves_head) { return; }
  let at = (b * shape.Hq + h) * shape.splits + split;
  chunk_ml[at] = vec2<f32>(running.m, running.l);
  for (var d = 0u; d < DH; d++) { chunk_acc[at * DH + d] = acc[d]; }
}

// One query head of one sequence: its chunks merged by log-sum-exp.
@compute @workgroup_size(64)
fn decode_merge(@builtin(global_invocation_id) id: vec3<u32>) {
  let head_row = id.x;   // b * Hq + h
  if (head_row >= shape.B * shape.Hq) { return; }
  let h = head_row % shape.Hq;
  var m = lowest;
  for (var i = 0u; i < shape.splits; i++) {
    let ml = chunk_ml[head_row * shape.splits + i];
    if (ml.y > 0.0) { m = max(m, ml.x); }
  }
  if (shape.has_sinks == 1u) { m = max(m, sinks[h]); }
  var l = 0.0;
  var acc: array<f32, DH>;
  for (var d = 0u; d < DH; d++) { acc[d] = 0.0; }
  for (var i = 0u; i < shape.splits; i++) {
    let at = head_row * shape.splits + i;
    let ml = chunk_ml[at];
    if (ml.y > 0.0) {
      let rescale = exp(ml.x - m);
      l += ml.y * rescale;
      for (var d = 0u; d < DH; d++) { acc[d] += chunk_acc[at * DH + d] * rescale; }
    }
  }
  if (shape.has_sinks == 1u) { l += exp(sinks[h] - m); }
  let inverse = select(0.0, 1.0 / l, l > 0.0);
  for (var d = 0u; d < DH; d++) { out[head_row * DH + d] = acc[d] * inverse; }
}
