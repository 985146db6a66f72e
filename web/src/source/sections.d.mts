// Types of sections.mjs (plain JavaScript so that node can read it without a build step).

/** A marked range of the core: `// [anatomy:id]` ... `// [/anatomy:id]` in `file`. */
export interface SectionSpec {
  /** Path from the repository root, e.g. "core/ops/rms_norm.cpp". */
  file: string;
  /** Code that must occur inside the range; the build fails otherwise. */
  contains: string[];
  /** Functions of the section declared in its header without a shape contract: name -> why. */
  noContract?: Record<string, string>;
}

/** A note on the lines of a view that contain `match` (which must occur inside the view's sections). */
export interface KeyNote {
  match: string;
  note: string;
}

/** One file with one or more of its sections highlighted. */
export interface View {
  label: string;
  sections: string[];
  notes: KeyNote[];
}

/** An entry of the source reader's list. */
export interface Operation {
  id: string;
  /** The label in the list. */
  short: string;
  title: string;
  summary: string;
  views: View[];
}

export declare const SECTIONS: Record<string, SectionSpec>;
export declare const OPERATIONS: Operation[];
