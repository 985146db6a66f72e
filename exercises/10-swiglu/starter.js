// x: [B, T, d]; wGate, wUp: [d, F]; wDown: [F, d]. Returns [B, T, d].
function swiglu(x, wGate, wUp, wDown) {
  throw new Error('not implemented');
}
