import type { VNode } from 'preact';
import { useState } from 'preact/hooks';
import type { QuireClient } from '../../../core/client/quire-client.js';
import { describe, QuireApiError } from '../api.js';
import { html } from '../html.js';
import { useTakeFocus } from './take-focus.js';

export interface PendingQuestion {
  id: string;
  questions: { header?: string; question: string; options?: { label: string; description?: string }[]; multiple?: boolean; custom?: boolean }[];
}

/** The agent's questions: options to pick (one, or several where allowed) and free text where allowed. */
export function QuestionCard({ client, sessionId, question, onAnswered }: { client: QuireClient; sessionId: string; question: PendingQuestion; onAnswered: () => void }): VNode {
  // What is ticked and what is typed, apart: typing replaced the ticked options (two of three answers
  // were dropped), and a pick left typed text on show that was not sent.
  const [chosen, setChosen] = useState<{ picked: string[]; typed: string }[]>(question.questions.map(() => ({ picked: [], typed: '' })));
  const [error, setError] = useState<string>();
  // One answer at a time: a double submit sent two, the second refused.
  const [busy, setBusy] = useState(false);
  // Several allowed: the options ticked and the text typed both go. One: a pick clears the text, and text clears the pick.
  const pick = (index: number, label: string, multiple: boolean): void => {
    setChosen(chosen.map((now, i) => (i !== index ? now : multiple
      ? { ...now, picked: now.picked.includes(label) ? now.picked.filter((item) => item !== label) : [...now.picked, label] }
      : { picked: [label], typed: '' })));
  };
  const type = (index: number, text: string, multiple: boolean): void => {
    setChosen(chosen.map((now, i) => (i !== index ? now : { picked: multiple ? now.picked : [], typed: text })));
  };
  const own = useTakeFocus<HTMLFormElement>();
  const answers = chosen.map(({ picked, typed }) => (typed.trim() !== '' ? [...picked, typed] : picked));
  // Every question answered (a choice, or text): an empty answer reached the model as 'User provided no answer.'
  const complete = answers.every((chosen) => chosen.some((answer) => answer.trim() !== ''));
  const submit = async (event: Event): Promise<void> => {
    event.preventDefault();
    if (busy || !complete) return;
    setBusy(true);
    try {
      await client.call('answerQuestion', { params: { id: sessionId, questionId: question.id }, body: { answers } });
      onAnswered();
    } catch (e) {
      // No longer waiting (answered elsewhere: 409, or its turn ended): the list is read again.
      if (e instanceof QuireApiError && (e.status === 404 || e.status === 409)) onAnswered();
      else setError(describe(e));
      setBusy(false);
    }
  };
  return html`<form class="question" tabindex="-1" ref=${own} aria-label="The agent asks" onSubmit=${submit} data-question=${question.id}>
    ${question.questions.map((q, index) => html`<fieldset>
      <legend>${q.header ? html`<strong>${q.header}: </strong>` : null}${q.question}</legend>
      ${(q.options ?? []).map((option) => html`<label class="option">
        <input type=${q.multiple ? 'checkbox' : 'radio'} name=${`q-${question.id}-${index}`} checked=${chosen[index]!.picked.includes(option.label)} onChange=${() => pick(index, option.label, q.multiple === true)} />
        ${option.label}${option.description ? html` <span class="muted">${option.description}</span>` : null}
      </label>`)}
      ${q.custom || !q.options?.length ? html`<label>Your answer <input type="text" value=${chosen[index]!.typed} onInput=${(event: Event) => type(index, (event.target as HTMLInputElement).value, q.multiple === true)} /></label>` : null}
    </fieldset>`)}
    ${error ? html`<p class="error" role="alert">${error}</p>` : null}
    <button type="submit" disabled=${busy || !complete}>Answer</button>
  </form>`;
}
