// RoPE, half-split pairing. x [B, H, T, D], positions [T].
function rope(x, positions, theta) {
  return x.map((heads) => heads.map((rows) => rows.map((row, t) => {
    const D = row.length, half = D / 2;
    const out = row.slice();
    for (let i = 0; i < half; i++) {
      const angle = positions[t] * Math.pow(theta, (-2 * i) / D);
      const cos = Math.cos(angle), sin = Math.sin(angle);
      out[i] = row[i] * cos - row[i + half] * sin;
      out[i + half] = row[i] * sin + row[i + half] * cos;
    }
    return out;
  })));
}
