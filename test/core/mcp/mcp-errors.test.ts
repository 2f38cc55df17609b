import { describe, expect, it } from 'vitest';
import { KernelError } from '../../../core/errors.js';
import { asJsonRpcError, REFUSED, RESOURCE_NOT_FOUND } from '../../../core/mcp/mcp-errors.js';

describe('kernel errors as JSON-RPC errors of resources and prompts', () => {
  it('answers bad input as invalid params, a missing note as not found, a refusal as refused, and the rest as internal, the kernel\'s code in data', () => {
    const as = (code: ConstructorParameters<typeof KernelError>[0]) => asJsonRpcError(new KernelError(code, 'said', { details: { field: 'x' } }), RESOURCE_NOT_FOUND) as { code: number; data: { code: string; field: string } };
    expect(as('INVALID_INPUT')).toMatchObject({ code: -32602, data: { code: 'INVALID_INPUT', field: 'x' } });
    expect(as('NOT_FOUND')).toMatchObject({ code: RESOURCE_NOT_FOUND });
    // A refusal by the rules was -32603 "Internal error", which a client takes for a fault to retry.
    for (const refusal of ['FORBIDDEN', 'EGRESS_DENIED', 'ACTION_DENIED', 'CAPABILITY_DENIED'] as const) expect(as(refusal)).toMatchObject({ code: REFUSED, data: { code: refusal } });
    expect(as('INTERNAL')).toMatchObject({ code: -32603 });
  });
});
