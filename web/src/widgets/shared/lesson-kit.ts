// Small pieces shared by the chapter widgets soft-lookup, rope (RoPE) and
// cost: the "updated in … ms" readout and number formats for FLOP and
// byte counts.
import { groupDigits } from '../../lib/words';

/**
 * Records how long an update took: data-updated-ms on the widget's host
 * ([data-widget], the element tests look at) and a visible line in `readout`.
 */
export function markUpdated(body: HTMLElement, readout: HTMLElement, ms: number, detail = ''): void {
  const host = body.closest<HTMLElement>('[data-widget]') ?? body;
  host.dataset.updatedMs = ms.toFixed(3);
  readout.textContent = `updated in ${ms.toFixed(1)} ms${detail}`;
}

/** 549755813888 -> "549,755,813,888"; exact while the count is below 2^53. */
export function grouped(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  if (Math.abs(value) >= 2 ** 53) return scientific(value, 3);
  return groupDigits(value);
}

/** 549755813888 -> "5.5e11". */
export function scientific(value: number, digits = 1): string {
  if (value === 0) return '0';
  const [mantissa, exponent] = value.toExponential(digits).split('e');
  return `${mantissa}e${Number(exponent)}`;
}

/** 67108864 -> "64 MiB". */
export function bytes(value: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let unit = 0, scaled = value;
  while (scaled >= 1024 && unit < units.length - 1) {
    scaled /= 1024;
    unit += 1;
  }
  return `${unit === 0 ? scaled : Number(scaled.toPrecision(3))} ${units[unit]}`;
}

/** 10 -> "10¹⁰"-style powers of ten for axis ticks. */
export function powerOfTen(exponent: number): string {
  const digits = '⁰¹²³⁴⁵⁶⁷⁸⁹';
  const sign = exponent < 0 ? '⁻' : '';
  return `10${sign}${String(Math.abs(exponent)).replace(/\d/g, (d) => digits[Number(d)])}`;
}
