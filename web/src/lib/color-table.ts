// A colour scale read from a table. A heatmap and a tinted table call a scale
// thousands of times per redraw; 256 steps are finer than the eye separates, as in
// d3's own viridis.
import { sampled } from './color-ramp.mjs';
import type { ColorScale } from './colormap';

/** `scale` sampled at `steps` points over [lo, hi]; values outside are clamped. */
export function tabulated(scale: ColorScale, lo: number, hi: number, steps = 256): ColorScale {
  return sampled(Array.from({ length: steps }, (_, i) => scale(lo + ((hi - lo) * i) / (steps - 1))), lo, hi);
}

/**
 * True when white text reads better than black on `color` ("rgb(r, g, b)" or
 * "#rrggbb"): WCAG relative luminance, black text above L = 0.179, where both
 * contrasts are equal.
 */
export function wantsLightText(color: string): boolean {
  const parts = colorChannels(color);
  if (!parts) return false;
  const linear = parts.map((c) => (c / 255 <= 0.04045 ? c / 255 / 12.92 : ((c / 255 + 0.055) / 1.055) ** 2.4));
  const luminance = 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2];
  return luminance < 0.179;
}

/** [r, g, b] (0 to 255) of "rgb(r, g, b)" or "#rrggbb" as the colour scales write them; null for anything else. */
export function colorChannels(color: string): [number, number, number] | null {
  const hex = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(color);
  const parts = hex ? hex.slice(1).map((h) => parseInt(h, 16)) : (color.match(/\d+(\.\d+)?/g) ?? []).slice(0, 3).map(Number);
  return parts.length < 3 ? null : [parts[0], parts[1], parts[2]];
}
