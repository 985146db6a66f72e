// Colour scales. Sequential values use viridis (perceptually uniform, readable in
// greyscale and by most colour-blind readers); signed differences use a diverging
// scale that is white at zero. Both are d3-scale-chromatic's, tabulated when the page
// is built (web/tools/color-ramps.mjs): viridis exactly as d3 returns it (d3's is a
// table of the same 256 colours), RdBu at 256 points, finer than the eye separates.
import { rdBu, viridis } from 'virtual:color-ramps';
import { binned, sampled } from './color-ramp.mjs';

export type ColorScale = (value: number) => string;

/** Viridis over [min, max]; values outside are clamped. */
export const sequential = (min = 0, max = 1): ColorScale => binned(viridis, min, max);

/** Red (negative) to white (zero) to blue (positive), symmetric around zero over [-limit, limit]. */
export function diverging(limit: number): ColorScale {
  const l = limit > 0 ? limit : 1;
  return sampled(rdBu, -l, l);
}

/** Colour used for cells the mask forbids (drawn with hatching on top). */
export const forbiddenFill = '#e8e8ec';
export const forbiddenHatch = '#9a9aa6';
