// Messages between the StreamingLLM widget and its worker (stream-worker.ts).
import type { StreamModelFiles, StreamModelInfo, StreamOptions, StreamReport } from '../../lib/stream-core';

export type StreamRequest =
  | { kind: 'load'; id: number; files: StreamModelFiles }
  | { kind: 'run'; id: number; options: StreamOptions };

export type StreamMessage =
  | { kind: 'loaded'; id: number; info: StreamModelInfo }
  | { kind: 'policies'; id: number; report: StreamReport }   // the three cache policies; the reference follows
  | { kind: 'report'; id: number; report: StreamReport }
  | { kind: 'error'; id: number; message: string };
