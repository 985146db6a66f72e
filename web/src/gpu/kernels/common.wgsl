// What every attention kernel here shares: the shape, the layout and the mask.
//
// q: [B, Hq, T, D], k and v: [B, Hkv, S, D], out: [B, Hq, T, D], all contiguous f32.
// The T queries sit at absolute positions S - T .. S - 1 (the keys before them were
// cached). Query head h reads KV head h / group, group = Hq / Hkv: grouped-query
// attention is an index, never a copy.
//
// The mask arrives as each query row's visible keys, two half-open ranges
// [x, y) and [z, w) (an unused one empty), computed by the core (core/masks.hpp,
// visible_keys) for every mask kind it knows: causal with a KV offset, sliding
// window, sinks plus window, prefix-LM, chunked, document. So the kernels apply
// the core's masks without a copy of their rules, and a tile is skipped exactly
// when the core's tile rule (classify_tiles) says no cell of it is visible.
//
// With learned sinks (gpt-oss), query head h has one more logit, sinks[h], in
// every row's maximum and denominator, with no value behind it.

struct Shape {
  B: u32, Hq: u32, Hkv: u32, T: u32,
  S: u32, D: u32, group: u32, has_sinks: u32,
  scale: f32, splits: u32, chunk: u32, record_head: u32,
  record_batch: u32, record_row: u32, tile_cols: u32, _pad: u32,
}

// The lowest f32: a masked score. exp(lowest - m) is exactly 0 for any finite m, and
// the kernels never rely on infinities (WGSL lets an implementation assume none).
const lowest: f32 = -0x1.fffffep+127f;

fn sees(ranges: vec4<i32>, s: u32) -> bool {
  let key = i32(s);
  return (key >= ranges.x && key < ranges.y) || (key >= ranges.z && key < ranges.w);
}

// Does the row see any key of [first, last)?
fn sees_any(ranges: vec4<i32>, first: u32, last: u32) -> bool {
  let a = i32(first);
  let b = i32(last);
  return (max(a, ranges.x) < min(b, ranges.y)) || (max(a, ranges.z) < min(b, ranges.w));
}

// Does the row see every key of [first, last)? (The two ranges never overlap.)
fn sees_all(ranges: vec4<i32>, first: u32, last: u32) -> bool {
  let a = i32(first);
  let b = i32(last);
  let seen = max(0, min(b, ranges.y) - max(a, ranges.x)) + max(0, min(b, ranges.w) - max(a, ranges.z));
  return seen == b - a;
}
