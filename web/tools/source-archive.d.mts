export const archiveName: string;
export const archiveFolder: string;
export function gitFiles(repo: string): string[] | null;
export function unignoredFiles(repo: string): string[];
export function sourceFiles(repo: string): { files: string[]; method: string; missing: string[] };
export function packSource(repo: string): Promise<{ bytes: Buffer; files: string[]; method: string; missing: string[] }>;
export function formatSize(bytes: number): string;
