/** Every error code the kernel produces. Tests assert codes, never message text. */
export type ErrorCode =
  // input and protocol
  | 'INVALID_INPUT'
  | 'INVALID_JSON'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'PAYLOAD_TOO_LARGE'
  // authentication and authorisation
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'ORIGIN_REFUSED'
  | 'CAPABILITY_DENIED'
  | 'ACTION_DENIED'
  | 'EGRESS_DENIED'
  | 'WORKSPACE_READ_ONLY'
  // lookups
  | 'NOT_FOUND'
  | 'ACTION_NOT_FOUND'
  | 'GRANT_NOT_FOUND'
  | 'CONFIRMATION_NOT_FOUND'
  // state
  | 'CONFLICT'
  | 'CONFIRMATION_ALREADY_ANSWERED'
  | 'CONFIRMATION_ARGS_MISMATCH'
  | 'CONFIRMATION_NOT_APPROVED'
  | 'CONFIRMATION_SESSION_MISMATCH'
  // manifests
  | 'MANIFEST_INVALID'
  | 'MANIFEST_JSON_INVALID'
  | 'MANIFEST_FIELD_MISSING'
  | 'MANIFEST_FIELD_UNKNOWN'
  | 'MANIFEST_FIELD_INVALID'
  | 'MANIFEST_EFFECT_UNKNOWN'
  | 'MANIFEST_EFFECTS_INCONSISTENT'
  | 'MANIFEST_VERSION_INVALID'
  | 'MANIFEST_KERNEL_RANGE_INVALID'
  | 'MANIFEST_KERNEL_INCOMPATIBLE'
  | 'MANIFEST_INPUT_SCHEMA_INVALID'
  | 'MANIFEST_CONFIG_SCHEMA_INVALID'
  | 'MANIFEST_WIRE_NAME_INVALID'
  | 'MANIFEST_WIRE_NAME_DUPLICATE'
  | 'MANIFEST_ENTRY_INVALID'
  | 'MANIFEST_ENTRY_MISSING'
  | 'MANIFEST_ID_MISMATCH'
  | 'MANIFEST_PROVIDES_RESERVED'
  // plugins
  | 'PLUGIN_DUPLICATE_ID'
  | 'PLUGIN_RESERVED_ID'
  | 'PLUGIN_DEPENDENCY_MISSING'
  | 'PLUGIN_DEPENDENCY_CYCLE'
  | 'PLUGIN_DEPENDENCY_REFUSED'
  | 'PLUGIN_PROVIDES_CONFLICT'
  | 'PLUGIN_LOAD_FAILED'
  | 'PLUGIN_ACTIVATION_FAILED'
  | 'PLUGIN_ACTIVATION_TIMEOUT'
  | 'PLUGIN_ACTION_MISMATCH'
  | 'PLUGIN_CONFIG_INVALID'
  | 'PLUGIN_ERROR'
  | 'WIRE_NAME_COLLISION'
  // kernel, workspace, audit
  | 'CONFIG_INVALID'
  | 'WORKSPACE_INVALID'
  | 'WORKSPACE_LOCKED'
  | 'NOT_READY'
  | 'MODEL_UNAVAILABLE'
  | 'UPSTREAM_FAILED'
  | 'UPSTREAM_TIMEOUT'
  | 'AUDIT_CHAIN_BROKEN'
  | 'DISK_FULL'
  | 'ACTION_TIMEOUT'
  | 'ACTION_CANCELLED'
  | 'JOB_NOT_FOUND'
  | 'INTERNAL';

export interface KernelErrorOptions {
  cause?: unknown;
  details?: Record<string, unknown>;
}

/** The one base error: a string code, a message for people, and structured details. */
export class KernelError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, options: KernelErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'KernelError';
    this.code = code;
    this.details = options.details ?? {};
  }

  toJSON(): { code: ErrorCode; message: string; details: Record<string, unknown> } {
    return { code: this.code, message: this.message, details: this.details };
  }
}

/** One problem found in a manifest: where (file and JSON pointer), what (code) and why. */
export interface ManifestIssue {
  code: ErrorCode;
  file: string;
  pointer: string;
  message: string;
}

export class ManifestError extends KernelError {
  readonly issues: readonly ManifestIssue[];

  constructor(issues: readonly ManifestIssue[]) {
    const first = issues[0];
    const summary = first ? `${first.file}${first.pointer ? `#${first.pointer}` : ''}: ${first.message}` : 'invalid manifest';
    const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
    super(first?.code ?? 'MANIFEST_INVALID', `${summary}${more}`, { details: { issues } });
    this.name = 'ManifestError';
    this.issues = issues;
  }
}

/** An error raised by or about one plugin; always names the plugin (and the action, when there is one). */
export class PluginError extends KernelError {
  readonly pluginId: string;
  readonly action: string | undefined;

  constructor(code: ErrorCode, pluginId: string, message: string, options: KernelErrorOptions & { action?: string } = {}) {
    super(code, `[plugin ${pluginId}${options.action ? ` ${options.action}` : ''}] ${message}`, {
      cause: options.cause,
      // The plugin and action come last: details passed along from elsewhere cannot overwrite them.
      details: { ...options.details, plugin: pluginId, ...(options.action ? { action: options.action } : {}) },
    });
    this.name = 'PluginError';
    this.pluginId = pluginId;
    this.action = options.action;
  }
}

export class ConflictError extends KernelError {
  constructor(code: Extract<ErrorCode, 'CONFLICT' | `CONFIRMATION_${string}`>, message: string, options?: KernelErrorOptions) {
    super(code, message, options);
    this.name = 'ConflictError';
  }
}

export class NotFoundError extends KernelError {
  constructor(code: Extract<ErrorCode, 'NOT_FOUND' | `${string}_NOT_FOUND`>, message: string, options?: KernelErrorOptions) {
    super(code, message, options);
    this.name = 'NotFoundError';
  }
}

export class CapabilityError extends KernelError {
  constructor(message: string, options?: KernelErrorOptions) {
    super('CAPABILITY_DENIED', message, options);
    this.name = 'CapabilityError';
  }
}

export function isKernelError(value: unknown): value is KernelError {
  return value instanceof KernelError;
}

/** Turns anything thrown into a KernelError without losing the original as `cause`. */
export function toKernelError(value: unknown, fallback: ErrorCode = 'INTERNAL'): KernelError {
  if (value instanceof KernelError) return value;
  const message = value instanceof Error ? value.message : String(value);
  return new KernelError(fallback, message, { cause: value });
}

/** The codes a plugin's own error may carry to its caller; anything else becomes PLUGIN_ERROR. */
export const PLUGIN_RAISABLE: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'INVALID_INPUT', 'PAYLOAD_TOO_LARGE', 'NOT_FOUND', 'CONFLICT', 'FORBIDDEN', 'EGRESS_DENIED', 'CAPABILITY_DENIED',
  'WORKSPACE_READ_ONLY', 'ACTION_TIMEOUT', 'ACTION_CANCELLED', 'PLUGIN_ERROR', 'DISK_FULL', 'MODEL_UNAVAILABLE', 'NOT_READY', 'ACTION_DENIED',
  // A remote the action fetched from (a skill's URL) failed: 502/504, the caller's request was fine.
  'UPSTREAM_FAILED', 'UPSTREAM_TIMEOUT',
  // A file of the workspace that is damaged (a document, a snapshot record): named, not hidden behind PLUGIN_ERROR.
  'WORKSPACE_INVALID',
]);

/** Whether a plain Error's `code` is one a plugin may raise (a plugin cannot import KernelError; Node's own codes, ENOENT…, are not). */
export function isRaisableCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && PLUGIN_RAISABLE.has(code as ErrorCode);
}
