// What the three parts of the RoPE widget share: the head they turn, the
// positions they show, and the model run of parts b and c.
import type { ForwardResult, RopePairing } from '../../lib/core';

export const headDim = 8;
export const theta = 10000;
export const positionCount = 32;                 // positions 0..31 in parts a and b
export const positions = Array.from({ length: positionCount }, (_, p) => p);
export const pairs = headDim / 2;
export const twoPi = 2 * Math.PI;

export const pairingName: Record<RopePairing, string> = { half_split: 'half split', interleaved: 'interleaved' };

/** The tiny model on the reader's ids, with its own pairing and with the other one. */
export interface Run {
  ids: number[];
  own: ForwardResult;          // the model's pairing (half_split)
  swapped: ForwardResult;      // the same weights with interleaved pairing
}

/** The layer and query head the reader picked, and the KV head that query head reads. */
export interface HeadChoice {
  layer: number;
  head: number;
  kvHead: number;
}
