import { ConflictError, KernelError, NotFoundError } from '../errors.js';
import { newId } from '../ids.js';
import type { ModelToolSpec } from './model-provider.js';

/** The agent's question to the person: structured, answered once (REFERENCE.md §5, question tool). */
export interface Question {
  header?: string;
  question: string;
  options?: { label: string; description?: string }[];
  multiple?: boolean;
  /** Whether a free-text answer is allowed besides the options. */
  custom?: boolean;
}

export interface PendingQuestion {
  id: string;
  sessionId: string;
  turnId: string;
  questions: Question[];
  createdAt: string;
}

/** The loop's own tool: not a plugin action, so no plugin can impersonate it and it never has effects. */
export const QUESTION_TOOL: ModelToolSpec = {
  name: 'question',
  description: 'Ask the person one or more questions and wait for the answers. Offer options when the choices are known; set multiple to allow several, custom to allow a free answer.',
  inputSchema: {
    type: 'object', additionalProperties: false, required: ['questions'],
    properties: {
      questions: {
        type: 'array', minItems: 1, maxItems: 10,
        items: {
          type: 'object', additionalProperties: false, required: ['question'],
          properties: {
            header: { type: 'string', maxLength: 100 },
            question: { type: 'string', minLength: 1, maxLength: 2000 },
            options: { type: 'array', maxItems: 20, items: { type: 'object', additionalProperties: false, required: ['label'], properties: { label: { type: 'string', minLength: 1, maxLength: 200 }, description: { type: 'string', maxLength: 1000 } } } },
            multiple: { type: 'boolean' },
            custom: { type: 'boolean' },
          },
        },
      },
    },
  },
};

/**
 * Questions waiting for the person. Each is answered once, by any admin client of its session; the
 * turn waits on it like on a confirmation.
 */
export class QuestionBoard {
  private readonly pending = new Map<string, { question: PendingQuestion; resolve(answers: string[][] | undefined): void }>();
  /** Questions answered or ended lately, by id → session: a second answer is told so (409), not "no such question". */
  private readonly ended = new Map<string, string>();

  ask(sessionId: string, turnId: string, questions: Question[], signal: AbortSignal): { question: PendingQuestion; answered: Promise<string[][] | undefined> } {
    const question: PendingQuestion = { id: newId(), sessionId, turnId, questions, createdAt: new Date().toISOString() };
    const answered = new Promise<string[][] | undefined>((resolve) => {
      this.pending.set(question.id, { question, resolve });
      const stop = (): void => { if (this.pending.delete(question.id)) { this.remember(question); resolve(undefined); } };
      if (signal.aborted) stop();
      else signal.addEventListener('abort', stop, { once: true });
    });
    return { question, answered };
  }

  list(sessionId: string): PendingQuestion[] {
    return [...this.pending.values()].map((entry) => entry.question).filter((question) => question.sessionId === sessionId);
  }

  /**
   * Accepts the answers once; each answer must fit its question (an option, or free text where allowed):
   * one that does not is bad input (400, naming which), a second answer a conflict (409).
   */
  answer(sessionId: string, id: string, answers: string[][]): void {
    const entry = this.pending.get(id);
    if (!entry || entry.question.sessionId !== sessionId) {
      if (this.ended.get(id) === sessionId) throw new ConflictError('CONFLICT', `question '${id}' was already answered, or its turn ended`, { details: { id, reason: 'already_answered' } });
      throw new NotFoundError('NOT_FOUND', `No pending question '${id}' in this session`, { details: { id } });
    }
    const { questions } = entry.question;
    const invalid = (message: string, pointer: string, reason: string): KernelError =>
      new KernelError('INVALID_INPUT', message, { details: { field: 'answers', reason, issues: [{ pointer, message }] } });
    if (answers.length !== questions.length) throw invalid(`${questions.length} answer list(s) are expected, one per question (${answers.length} given)`, '/answers', 'answer_count');
    answers.forEach((chosen, i) => {
      const question = questions[i]!;
      const labels = new Set((question.options ?? []).map((option) => option.label));
      if (!question.multiple && chosen.length > 1) throw invalid(`question ${i + 1} takes one answer`, `/answers/${i}`, 'not_multiple');
      const free = chosen.findIndex((value) => !labels.has(value));
      if (free !== -1 && labels.size > 0 && !question.custom) throw invalid(`question ${i + 1} takes one of its options`, `/answers/${i}/${free}`, 'not_an_option');
    });
    this.pending.delete(id);
    this.remember(entry.question);
    entry.resolve(answers);
  }

  private remember(question: PendingQuestion): void {
    this.ended.set(question.id, question.sessionId);
    // The last few hundred are enough to tell a repeated answer from a wrong id.
    if (this.ended.size > 500) this.ended.delete(this.ended.keys().next().value!);
  }
}
