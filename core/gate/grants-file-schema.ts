import type { ValidateFunction } from 'ajv';
import { getKernelAjv } from '../schema/ajv.js';
import { loadPrecompiled } from '../schema/precompiled.js';

let validator: ValidateFunction | undefined;

/** grants.json as the kernel writes it; a hand edit that breaks it stops the boot, naming the pointer. */
export const GRANTS_FILE_SCHEMA = {
  type: 'object',
  required: ['version', 'grants'],
  properties: {
    version: { const: 1 },
    grants: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'plugin', 'tool', 'action', 'effects', 'createdAt', 'createdBy'],
        properties: {
          id: { type: 'string', minLength: 1 },
          plugin: { type: 'string', minLength: 1 },
          tool: { type: 'string', minLength: 1 },
          action: { type: 'string', minLength: 1 },
          effects: { type: 'array', uniqueItems: true, items: { enum: ['localWrite', 'dataEgress', 'externalCost'] } },
          notebook: { type: 'string' },
          expiresAt: { type: 'string', format: 'date-time' },
          createdAt: { type: 'string' },
          createdBy: { type: 'string' },
          fromConfirmation: { type: 'string' },
        },
        additionalProperties: false,
      },
    },
  },
} as const;

/** The schema's validator, generated at build time where `npm run build` made it (core/schema/precompiled.ts). */
export function grantsFileValidator(): ValidateFunction {
  validator ??= loadPrecompiled('grants-file', 'kernel', GRANTS_FILE_SCHEMA) ?? getKernelAjv().compile(GRANTS_FILE_SCHEMA);
  return validator;
}
