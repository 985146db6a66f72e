// v1 flash: FlashAttention's loop (Dao et al., 2022), the T x S score matrix never
// written. A workgroup owns a tile of BR query rows of one head (b, h), one invocation
// per row. It walks the keys in tiles of BC: the invocations load the tile's K and V
// rows into workgroup memory together, then each scores its row against them and
// folds the tile into its running maximum m, sum l and unnormalised output acc
// (online_softmax.wgsl), and at the end out = acc / l, after folding in the sink's
// logit, if any. The core's tile rule (classify_tiles), from the rows' ranges: a tile
// that no row of the workgroup may see is skipped whole (its keys are never loaded); a
// tile whose every cell is visible (rows past T and keys past S aside) is computed
// without looking at the mask; only the tiles the mask's edge crosses apply it.
// Constants set by the host when it builds the pipeline: BR rows per workgroup, BC keys
// per tile, DH the head size, RECORD whether the tile record is written. With RECORD
// false its code is compiled out: the record costs nothing when off.
// Workgroup memory: 2 x BC x DH x 4 bytes (the host fits BC to the adapter's limit).
// Measured speed (`node web/bench/webgpu-attention.mjs`, docs/gpu.md, B 1, Hq 32, Hkv 4,
// D 64, causal, f32): on SwiftShader (software, 2 CPU cores, BR 64, BC 32) 417 ms at T = 256
// and 5,075 ms at T = 1,024, 3.4 times faster than onnxruntime-web's plain graph.

@group(0) @binding(0) var<uniform> shape: Shape;
@group(0) @binding(1) var<storage, read> q: array<f32>;
@group(0) @binding(2) var<storage, read> k: array<f32>;
@group(0) @binding(3) var<storage, read> v: array<f32>;
@group(0) @binding(4) var<storage, read> sinks: array<f32>;
@group(0) @binding(5) var<storage, read> ranges: array<vec4<i32>>;
@group(0) @binding(6) var<storage, read_write> out: array<f32>;
// The tile record, for head (record_batch, record_head): per tile of (query tile,
// key tile) 1 computed with the mask, 2 skipped, 3 computed without it (0: never
// reached; core/verify/kernel_cases.hpp names them); for query row record_row, the
// running (m, l) after each key tile.
@group(0) @binding(7) var<storage, read_write> tile_states: array<u32>;
@group(0) @binding(8) var<storage, read_write> row_trace: array<vec2<f32>>;

var<workgroup> k_tile: array<f32, BC * DH>;
var<workgroup> v_tile: array<f32, BC * DH>;
var<workgroup> row_sees: array<u32, BR>;   // per row: 1 sees some key of the tile, 2 every key
var<workgroup> tile_seen: u32;             // 0 skipped, 1 some cell visible, 2 every cell

@compute @workgroup_size(BR)
fn flash(@builtin(workgroup_id) group_id: vec3<u32>, @builtin(local_invocation_index) lane: u32) {
  let h = group_id.y;
  let b = group_id.z;
  let t = group_id.x * BR + lane;
  let owns_row = t < shape.T;   // the last tile may hang past T: those invocations only help load
  let kv_base = (b * shape.Hkv + h / shape.group) * shape.S * DH;
  let row = (b * shape.Hq + h) * shape.T + t;
  var my_ranges = vec4<i32>(0, 0, 0, 0);
  var q_row: array<f32, DH>;
  var acc: array<f32, DH>;
  if (owns_row) {
    my_ranges = ranges[t];
    for (var d = 0u; d < DH; d++) { q_row[d] = q[row * DH + d] * shape.scale; }
  }
  for (var d = 0u; d < DH; d++) { acc[d] = 0.0; }
  var running = Running(lowest, 0.0);
  let recording = RECORD && b == shape.record_batch && h == shape.record_head;

  let key_tiles = (shape.S + BC - 1u) / BC;
  for (var tile = 0u; tile < key_tiles; tile++) {
    let first = tile * BC;
    let last = min(shape.S, first + BC);
    // Does any row of the workgroup see a key of this tile, and does every row see them all?
    // (An invocation past T has no row: it neither sees nor stops the tile being full.)
    row_sees[lane] = select(select(0u, select(1u, 2u, sees_all(my_ranges, first, last)), sees_any(my_ranges, first, last)),
                            2u, !owns_row);
    workgroupBarrier();
    if (lane == 0u) {
      var some_row = false;
      var every_row = true;
      for (var i = 0u; i < BR; i++) {
        let owned = group_id.x * BR + i < shape.T;
        some_row = some_row || (owned && row_sees[i] != 0u);
        every_row = every_row && row_sees[i] == 2u;
      }
      tile_seen = select(0u, select(1u, 2u, every_row), some_row);
    }
    let seen = workgroupUniformLoad(&tile_seen);
    if (RECORD && recording && lane == 0u) {
      tile_states[group_id.x * shape.tile_cols + tile] = select(2u, select(1u, 3u, seen == 2u), seen != 0u);
    }
    if (seen != 0u) {
      load_tile(kv_base, first, last, lane, BR);
      workgroupBarrier();
      if (owns_row) { fold_tile(&q_row, &acc, &running, my_ranges, first, last, seen == 1u); }
      workgroupBarrier();
    }
    if (RECORD && recording && owns_row && t == shape.record_row) { row_trace[tile] = vec2<f32>(running.m, running.l); }
  }

  if (!owns_row) { return; }
  var l = running.l;
  if (shape.has_sinks == 1u) {
    let sink = sinks[h];
    let m_new = max(running.m, sink);
    let rescale = exp(running.m - m_new);
    l = l * rescale + exp(sink - m_new);
    for (var d = 0u; d < DH; d++) { acc[d] = acc[d] * rescale; }
  }
  let inverse = select(0.0, 1.0 / l, l > 0.0);
  for (var d = 0u; d < DH; d++) { out[row * DH + d] = acc[d] * inverse; }
}
