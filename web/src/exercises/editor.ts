// The code editor: CodeMirror 6 with JavaScript highlighting and little else.
// Only the exercises page imports this file, so the chapters never load CodeMirror.
import { EditorView, minimalSetup } from 'codemirror';
import { javascript } from '@codemirror/lang-javascript';
import { closeBrackets, closeBracketsKeymap } from '@codemirror/autocomplete';
import { indentWithTab } from '@codemirror/commands';
import { bracketMatching, indentOnInput, indentUnit } from '@codemirror/language';
import { Prec, StateEffect, StateField } from '@codemirror/state';
import { Decoration, DecorationSet, highlightActiveLine, highlightActiveLineGutter, keymap, lineNumbers } from '@codemirror/view';

export interface CodeEditor {
  view: EditorView;
  getCode(): string;
  setCode(code: string): void;
  /** Puts the cursor on a line (1-based), marks the line, scrolls to it and focuses the editor. */
  showLine(line: number, column?: number): void;
  destroy(): void;
}

export interface EditorOptions {
  code: string;
  /** The accessible name of the editing area, e.g. "Your code for softmax". */
  label: string;
  onChange(code: string): void;
  /** Ctrl+Enter / Cmd+Enter. */
  onRun(): void;
}

// One marked line at a time (the line an error points at); any edit clears it.
const markLine = StateEffect.define<number | null>();
const errorLineMark = Decoration.line({ class: 'cm-error-line' });
const markedLine = StateField.define<DecorationSet>({
  create: () => Decoration.none,
  update(marks, transaction) {
    if (transaction.docChanged) marks = Decoration.none;
    for (const effect of transaction.effects) {
      if (!effect.is(markLine)) continue;
      const line = effect.value;
      marks = line === null ? Decoration.none : Decoration.set([errorLineMark.range(transaction.state.doc.line(line).from)]);
    }
    return marks;
  },
  provide: (field) => EditorView.decorations.from(field),
});

export function createEditor(parent: HTMLElement, options: EditorOptions): CodeEditor {
  const view = new EditorView({
    parent,
    doc: options.code,
    extensions: [
      minimalSetup,
      lineNumbers(),
      highlightActiveLineGutter(),
      highlightActiveLine(),
      indentOnInput(),
      bracketMatching(),
      closeBrackets(),
      indentUnit.of('  '),
      javascript(),
      EditorView.lineWrapping, // no sideways scrolling on a phone
      markedLine,
      // Highest precedence: minimalSetup's default keymap binds Mod-Enter to
      // insertBlankLine, and the first binding that handles a key wins.
      Prec.highest(keymap.of([{ key: 'Mod-Enter', run: () => (options.onRun(), true), preventDefault: true }])),
      keymap.of([
        ...closeBracketsKeymap,
        indentWithTab,
      ]),
      // tabindex: the text area is focusable anyway (contenteditable); saying so lets
      // checkers see that the scrolling editor can be reached from the keyboard.
      EditorView.contentAttributes.of({ 'aria-label': options.label, tabindex: '0' }),
      EditorView.updateListener.of((update) => {
        if (update.docChanged) options.onChange(update.state.doc.toString());
      }),
    ],
  });
  return {
    view,
    getCode: () => view.state.doc.toString(),
    setCode(code) {
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: code }, effects: markLine.of(null) });
    },
    showLine(line, column = 1) {
      const doc = view.state.doc;
      const target = doc.line(Math.min(Math.max(1, line), doc.lines));
      const at = Math.min(target.from + Math.max(0, column - 1), target.to);
      view.dispatch({
        selection: { anchor: at },
        effects: [markLine.of(target.number), EditorView.scrollIntoView(at, { y: 'center' })],
      });
      view.focus();
    },
    destroy: () => view.destroy(),
  };
}
