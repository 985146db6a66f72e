// The module the Vite plugin in web/tools/color-ramps.mjs generates at build time
// from d3-scale-chromatic: each scale as 256 CSS colours.
declare module 'virtual:color-ramps' {
  /** interpolateViridis on [i/256, (i+1)/256), "#rrggbb". */
  export const viridis: string[];
  /** interpolateRdBu at i/255, "rgb(r, g, b)". */
  export const rdBu: string[];
}
