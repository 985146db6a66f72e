// d: model width; T: number of tokens. A multiply-add counts as 2 FLOPs.
// Returns { projections, scores, weighted }.
function attentionFlops(d, T) {
  return { projections: 0, scores: 0, weighted: 0 };
}
