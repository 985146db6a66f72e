// The mistake under test (rope_interleaved): channels 2i and 2i + 1 are rotated together.
// Rotary position embedding, half-split pairing: channel i turns together with
// channel i + D/2, by the angle position * theta^(-2i / D).
// x [B, H, T, D], positions [T].
function rope(x, positions, theta) {
  return x.map((heads) => heads.map((rows) => rows.map((row, t) => {
    const D = row.length, half = D / 2;
    const out = row.slice();
    for (let i = 0; i < half; i++) {
      const angle = positions[t] * Math.pow(theta, (-2 * i) / D);
      const cos = Math.cos(angle), sin = Math.sin(angle);
      const a = row[2 * i], b = row[2 * i + 1];
      out[2 * i] = a * cos - b * sin;
      out[2 * i + 1] = a * sin + b * cos;
    }
    return out;
  })));
}
