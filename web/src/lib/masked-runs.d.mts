/** Each row's stretches of cells `allowed` refuses, as [row, first column, one past the last], row by row. */
export function maskedRuns(rows: number, cols: number, allowed: (row: number, col: number) => boolean): [number, number, number][];
