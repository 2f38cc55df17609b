import { KernelError } from '../errors.js';

/**
 * A date-time from a request as an ISO instant. The schema's date-time format lets a leap second
 * (`23:59:60Z`) through, which no Date can hold: it threw a RangeError, answered 500.
 */
export function instantOf(value: string, field: string): string {
  const time = Date.parse(value);
  if (Number.isNaN(time)) throw new KernelError('INVALID_INPUT', `${field} '${value.slice(0, 40)}' is not a time this kernel can hold (a leap second?)`, { details: { field, issues: [{ pointer: `/${field}`, message: 'is not a valid time' }] } });
  return new Date(time).toISOString();
}
