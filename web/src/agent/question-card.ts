import type { VNode } from 'preact';
import { useState } from 'preact/hooks';
import type { QuireClient } from '../../../core/client/quire-client.js';
import { describe, QuireApiError } from '../api.js';
import { html } from '../html.js';

export interface PendingQuestion {
  id: string;
  questions: { header?: string; question: string; options?: { label: string; description?: string }[]; multiple?: boolean; custom?: boolean }[];
}

/** The agent's questions: options to pick (one, or several where allowed) and free text where allowed. */
export function QuestionCard({ client, sessionId, question, onAnswered }: { client: QuireClient; sessionId: string; question: PendingQuestion; onAnswered: () => void }): VNode {
  const [answers, setAnswers] = useState<string[][]>(question.questions.map(() => []));
  const [error, setError] = useState<string>();
  // One answer at a time: a double submit sent two, the second refused.
  const [busy, setBusy] = useState(false);
  const pick = (index: number, label: string, multiple: boolean): void => {
    setAnswers(answers.map((chosen, i) => (i !== index ? chosen : multiple ? (chosen.includes(label) ? chosen.filter((item) => item !== label) : [...chosen, label]) : [label])));
  };
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
  return html`<form class="question" onSubmit=${submit} data-question=${question.id}>
    ${question.questions.map((q, index) => html`<fieldset>
      <legend>${q.header ? html`<strong>${q.header}: </strong>` : null}${q.question}</legend>
      ${(q.options ?? []).map((option) => html`<label class="option">
        <input type=${q.multiple ? 'checkbox' : 'radio'} name=${`q-${question.id}-${index}`} checked=${answers[index]!.includes(option.label)} onChange=${() => pick(index, option.label, q.multiple === true)} />
        ${option.label}${option.description ? html` <span class="muted">${option.description}</span>` : null}
      </label>`)}
      ${q.custom || !q.options?.length ? html`<label>Your answer <input type="text" onInput=${(event: Event) => setAnswers(answers.map((chosen, i) => (i === index ? [(event.target as HTMLInputElement).value] : chosen)))} /></label>` : null}
    </fieldset>`)}
    ${error ? html`<p class="error" role="alert">${error}</p>` : null}
    <button type="submit" disabled=${busy || !complete}>Answer</button>
  </form>`;
}
