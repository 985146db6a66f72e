// Types of codec.mjs (plain JavaScript so that node runs it without a build step).

/** A value as the judge writes it in JSON: non-finite numbers as "NaN", "Infinity", "-Infinity". */
export type JudgeValue = number | string | boolean | null | JudgeValue[] | { [key: string]: JudgeValue };

export declare function decode(value: JudgeValue): unknown;
export declare function decodeJson(text: string): unknown;
export declare function encodeNumber(x: number): number | string;
export declare function decodeNumber(x: number | string): number;
export declare class WrongTypeError extends Error {}
export declare function encode(value: unknown, where?: string): JudgeValue;
