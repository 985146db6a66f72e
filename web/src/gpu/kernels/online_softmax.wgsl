// What both tiled kernels (v1 flash, v2 decode) do with every tile of keys they hold in
// workgroup memory (k_tile and v_tile: BC keys of DH channels each): load it, then score
// one query row against the tile's visible keys and fold them into the row's running
// maximum m, sum l and unnormalised output acc, FlashAttention's online softmax:
//   m_new = max(m, max_j s_j);  l = l e^(m - m_new) + sum_j e^(s_j - m_new)
//   acc   = acc e^(m - m_new) + sum_j e^(s_j - m_new) v_j
// A tile the row sees nothing of leaves all three as they were. q_row is already scaled
// by 1/sqrt(D); a hidden key's score is the lowest f32, whose e^(s - m_new) is exactly 0.
// `masked` false: every key of the tile is visible, and the mask is not looked at.

// Keys first .. last - 1 of one KV head (its rows start at kv_base in k and v) into
// k_tile and v_tile, the workgroup's `invocations` side by side (this one is `lane`);
// a slot past `last` holds 0. The caller's barrier then makes the tile whole.
fn load_tile(kv_base: u32, first: u32, last: u32, lane: u32, invocations: u32) {
  for (var i = lane; i < BC * DH; i += invocations) {
    let key = first + i / DH;
    let at = kv_base + key * DH + i % DH;
    k_tile[i] = select(0.0, k[min(at, arrayLength(&k) - 1u)], key < last);
    v_tile[i] = select(0.0, v[min(at, arrayLength(&v) - 1u)], key < last);
  }
}

struct Running {
  m: f32,   // the largest score so far (lowest before any)
  l: f32,   // sum of e^(score - m) so far
}

fn fold_tile(q_row: ptr<function, array<f32, DH>>, acc: ptr<function, array<f32, DH>>, running: ptr<function, Running>,
             ranges: vec4<i32>, first: u32, last: u32, masked: bool) {
  var p: array<f32, BC>;
  var tile_max = lowest;
  for (var j = 0u; j < BC; j++) {
    p[j] = lowest;
    let key = first + j;
    if (key < last && (!masked || sees(ranges, key))) {
      var dot = 0.0;
      for (var d = 0u; d < DH; d++) { dot += (*q_row)[d] * k_tile[j * DH + d]; }
      p[j] = dot;
      tile_max = max(tile_max, dot);
    }
  }
  if (tile_max == lowest) { return; }
  let m_new = max((*running).m, tile_max);
  let rescale = exp((*running).m - m_new);
  (*running).l = (*running).l * rescale;
  for (var d = 0u; d < DH; d++) { (*acc)[d] = (*acc)[d] * rescale; }
  for (var j = 0u; j < BC; j++) {
    let e = exp(p[j] - m_new);
    (*running).l += e;
    for (var d = 0u; d < DH; d++) { (*acc)[d] += e * v_tile[j * DH + d]; }
  }
  (*running).m = m_new;
}
