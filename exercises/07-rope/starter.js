// x: [B, H, T, D] with D even; positions: [T]; theta: the base (e.g. 10000).
// Returns [B, H, T, D]: channel i turns with channel i + D/2.
function rope(x, positions, theta) {
  throw new Error('not implemented');
}
