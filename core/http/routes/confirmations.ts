import { Hono } from 'hono';
import type { Kernel } from '../../kernel.js';
import { KernelError, NotFoundError } from '../../errors.js';
import type { ConfirmationStatus } from '../../gate/confirmation.js';
import type { HttpEnv } from '../http-env.js';
import type { JsonSchema } from '../openapi/openapi-types.js';
import { bodyValidator, readJsonBody } from '../read-body.js';
import { instantOf } from '../instant.js';

interface AnswerBody {
  approved: boolean;
  always?: boolean;
  argsHash: string;
  /** Scope of the grant "always" creates: a notebook id, or null for every notebook. */
  notebook?: string | null;
  expiresAt?: string;
}

export const CONFIRMATION_ANSWER_BODY: JsonSchema = {
  type: 'object',
  required: ['approved', 'argsHash'],
  additionalProperties: false,
  properties: {
    approved: { type: 'boolean' },
    always: { type: 'boolean' },
    argsHash: { type: 'string', pattern: '^[0-9a-f]{64}$' },
    notebook: { type: ['string', 'null'] },
    expiresAt: { type: 'string', format: 'date-time' },
  },};
const parseAnswer = bodyValidator<AnswerBody>(CONFIRMATION_ANSWER_BODY);

const STATUSES: readonly ConfirmationStatus[] = ['pending', 'approved', 'rejected', 'consumed', 'expired'];

function isStatus(value: string): value is ConfirmationStatus {
  return (STATUSES as readonly string[]).includes(value);
}

/** Pending confirmations: list, read, and answer (exactly once, for the arguments shown). Admin only. */
export function confirmationRoutes(kernel: Kernel): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();
  app.get('/', (c) => {
    const status = c.req.query('status');
    if (status !== undefined && !isStatus(status)) {
      throw new KernelError('INVALID_INPUT', `status must be one of ${STATUSES.join(', ')}`, { details: { issues: [{ pointer: '/status', message: 'unknown status' }] } });
    }
    return c.json({ confirmations: kernel.confirmations.list(status === undefined ? {} : { status }) });
  });
  app.get('/:id', (c) => {
    const confirmation = kernel.confirmations.get(c.req.param('id'));
    if (!confirmation) throw new NotFoundError('CONFIRMATION_NOT_FOUND', `no confirmation with id '${c.req.param('id')}'`);
    return c.json({ confirmation });
  });
  app.post('/:id/answer', async (c) => {
    const body = parseAnswer(await readJsonBody(c));
    const confirmation = await kernel.confirmations.answer(c.req.param('id'), {
      approved: body.approved,
      always: body.always === true,
      argsHash: body.argsHash,
      answeredBy: `person:${c.get('principal').name}`,
      ...(body.notebook !== undefined ? { grantNotebook: body.notebook } : {}),
      ...(body.expiresAt !== undefined ? { grantExpiresAt: instantOf(body.expiresAt, 'expiresAt') } : {}),
    });
    return c.json({ confirmation });
  });
  return app;
}
