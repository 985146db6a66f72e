// Vite plugin: the page's two colour scales as the module `virtual:color-ramps`,
// 256 colours each, sampled from d3-scale-chromatic when the page is built, so the
// page ships the colours and not d3's colour parsing and spline code (9 kB gzipped
// in each chapter that draws a heatmap). Read by src/lib/colormap.ts through
// src/lib/color-ramp.mjs; tests/web/color-ramps.test.mjs holds them to d3.
//   viridis[i]  d3's interpolateViridis, itself a table of 256 colours: entry i is what
//               it returns for every t in [i/256, (i+1)/256), here sampled at the middle
//   rdBu[i]     d3's interpolateRdBu (a basis spline through 11 colours) at t = i/255
import { interpolateRdBu, interpolateViridis } from 'd3-scale-chromatic';

const publicId = 'virtual:color-ramps';
const resolvedId = '\0virtual:color-ramps';
const steps = 256;

export function colorRampTables() {
  const indices = Array.from({ length: steps }, (_, i) => i);
  return {
    viridis: indices.map((i) => interpolateViridis((i + 0.5) / steps)),
    rdBu: indices.map((i) => interpolateRdBu(i / (steps - 1))),
  };
}

export function colorRamps() {
  return {
    name: 'color-ramps',
    resolveId: (id) => (id === publicId ? resolvedId : undefined),
    load(id) {
      if (id !== resolvedId) return undefined;
      const { viridis, rdBu } = colorRampTables();
      return `export const viridis = ${JSON.stringify(viridis)};\nexport const rdBu = ${JSON.stringify(rdBu)};\n`;
    },
  };
}
