// q, kNew, vNew: [B, H, 1, D]; kCache, vCache: [B, H, S, D].
// Returns { out: [B, H, 1, D], kCache: [B, H, S + 1, D], vCache: [B, H, S + 1, D] }.
function decodeStep(q, kCache, vCache, kNew, vNew) {
  throw new Error('not implemented');
}
