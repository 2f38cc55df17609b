import type { JsonSchemaType, JsonSchemaValidator, jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import { getForeignSchemaAjv } from '../../manifest/manifest-schema.js';

/**
 * The SDK client checks a tool's structured answer against the tool's `outputSchema`, on the main
 * thread, with its own ajv and JavaScript's backtracking patterns: a server could hang the kernel with
 * one answer. Checked here with the kernel's instance for foreign schemas (linear-time patterns); a
 * schema it cannot compile (a lookaround) checks nothing rather than fail the server's whole listing,
 * which the SDK compiles every output schema for.
 */
export const foreignOutputValidator: jsonSchemaValidator = {
  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    const ajv = getForeignSchemaAjv();
    let validate: ReturnType<typeof ajv.compile> | undefined;
    try {
      validate = ajv.compile(schema as object);
    } catch {
      validate = undefined;
    }
    return (input) => {
      if (validate === undefined || validate(input)) return { valid: true, data: input as T, errorMessage: undefined };
      return { valid: false, data: undefined, errorMessage: ajv.errorsText(validate.errors) };
    };
  },
};
