// x: [B, T, d]; weight: [d]; eps > 0. Returns [B, T, d].
function rmsnorm(x, weight, eps) {
  throw new Error('not implemented');
}
