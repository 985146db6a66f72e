// The KV-cache stepper's controls: the prompt with Prefill, the next tokens (empty: the
// greedy choice; several: one chunk through the cache) with their button, and Reset.
// Typing checks the prompt at once; the cache changes only on a button (or Enter).
import { el, labelled } from '../../lib/dom';
import { parseTokenIds } from '../../lib/token-ids';

// The tiny model's vocabulary: ids 0 .. 31.
export const vocabSize = 32;
export const defaultPrompt = [1, 2, 3];

/** `limit` ids at most, each in the tiny model's vocabulary. */
export function parseTokens(text: string, limit: number): { ids: number[] } | { error: string } {
  return parseTokenIds(text, { vocabSize, max: limit, taker: 'the stepper' });
}

export interface StepActions {
  prefill(ids: number[]): void;
  /** null: the greedy choice; several ids: one chunk after the cache. */
  step(tokens: number[] | null): void;
  reset(): void;
  /** A problem with what was typed. */
  refuse(message: string): void;
}

export class StepControls {
  readonly root: HTMLElement;
  readonly prompt = el('input', { type: 'text', inputmode: 'numeric', autocomplete: 'off', spellcheck: 'false', class: 'kv-prompt', 'data-testid': 'kv-stepper-prompt', value: defaultPrompt.join(',') });
  private readonly token = el('input', { type: 'text', inputmode: 'numeric', autocomplete: 'off', spellcheck: 'false', class: 'kv-token', 'data-testid': 'kv-stepper-token' });
  private readonly stepButton = el('button', { type: 'button', 'data-testid': 'kv-stepper-step' }, 'Decode next token');
  private readonly maxTokens: number;

  constructor(maxTokens: number, actions: StepActions) {
    this.maxTokens = maxTokens;
    const prefillButton = el('button', { type: 'button', 'data-testid': 'kv-stepper-prefill' }, 'Prefill');
    const resetButton = el('button', { type: 'button', class: 'secondary', 'data-testid': 'kv-stepper-reset' }, 'Reset');
    this.root = el(
      'div',
      { class: 'controls kv-controls' },
      labelled('Prompt', this.prompt, `token ids 0 to ${vocabSize - 1}, comma-separated`),
      prefillButton,
      labelled('Next tokens', this.token, 'empty: the greedy choice; several ids, comma-separated, go through the cache as one chunk'),
      this.stepButton,
      resetButton,
    );
    const promptHint = this.root.querySelector<HTMLElement>(`#${this.prompt.getAttribute('aria-describedby')}`)!;
    this.prompt.addEventListener('input', () => {
      const parsed = parseTokens(this.prompt.value, maxTokens);
      if ('error' in parsed) this.prompt.setAttribute('aria-invalid', 'true');
      else this.prompt.removeAttribute('aria-invalid');
      promptHint.textContent =
        'error' in parsed ? parsed.error : `Prefill runs these ${parsed.ids.length} id${parsed.ids.length === 1 ? '' : 's'} in one pass, from an empty cache.`;
    });
    prefillButton.addEventListener('click', () => {
      this.prompt.removeAttribute('aria-invalid');
      const parsed = parseTokens(this.prompt.value, maxTokens);
      if ('ids' in parsed) return actions.prefill(parsed.ids);
      this.prompt.setAttribute('aria-invalid', 'true');
      actions.refuse(parsed.error);
    });
    this.stepButton.addEventListener('click', () => {
      this.token.removeAttribute('aria-invalid');
      const text = this.token.value.trim();
      if (text === '') return actions.step(null);
      const parsed = this.parseNext(text);
      if ('ids' in parsed) return actions.step(parsed.ids);
      this.token.setAttribute('aria-invalid', 'true');
      actions.refuse(`Next tokens: ${parsed.error} Type one or more, or leave the box empty for the greedy choice.`);
    });
    // The button says what it will do: one token decoded, or a chunk appended.
    this.token.addEventListener('input', () => {
      const parsed = this.token.value.trim() === '' ? null : this.parseNext(this.token.value);
      const n = parsed && 'ids' in parsed ? parsed.ids.length : 1;
      this.stepButton.textContent = n > 1 ? `Append ${n} tokens` : 'Decode next token';
    });
    resetButton.addEventListener('click', () => actions.reset());
    // Enter in a text box does what its button does.
    this.prompt.addEventListener('keydown', (e) => e.key === 'Enter' && prefillButton.click());
    this.token.addEventListener('keydown', (e) => e.key === 'Enter' && !this.stepButton.disabled && this.stepButton.click());
  }

  /** After a step: the greedy choice as the box's placeholder (null: none), whether another step fits. */
  setNext(greedy: number | null, canStep: boolean): void {
    this.token.placeholder = greedy === null ? '' : `greedy: ${greedy}`;
    this.stepButton.disabled = !canStep;
  }

  clearToken(): void {
    this.token.value = '';
    this.stepButton.textContent = 'Decode next token';
  }

  private parseNext(text: string): { ids: number[] } | { error: string } {
    return parseTokenIds(text, { vocabSize, max: this.maxTokens, taker: 'the next-tokens box' });
  }
}
