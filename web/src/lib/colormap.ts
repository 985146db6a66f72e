// Colour scales. Sequential values use viridis (perceptually uniform, readable in
// greyscale and by most colour-blind readers); signed differences use a diverging
// scale that is white at zero.
import { interpolateViridis, interpolateRdBu } from 'd3-scale-chromatic';

export type ColorScale = (value: number) => string;

/** Viridis over [min, max]; values outside are clamped. */
export function sequential(min = 0, max = 1): ColorScale {
  const span = max - min || 1;
  return (value) => interpolateViridis(Math.min(1, Math.max(0, (value - min) / span)));
}

/** Red (negative) to white (zero) to blue (positive), symmetric around zero over [-limit, limit]. */
export function diverging(limit: number): ColorScale {
  const l = limit > 0 ? limit : 1;
  return (value) => interpolateRdBu(0.5 + 0.5 * Math.min(1, Math.max(-1, value / l)));
}

/** Colour used for cells the mask forbids (drawn with hatching on top). */
export const forbiddenFill = '#e8e8ec';
export const forbiddenHatch = '#9a9aa6';
