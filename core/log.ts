export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  child(tag: string): Logger;
}

export interface LogSink {
  write(line: string): void;
}

const LEVELS: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };
/** Field names whose values are never written, whatever their depth. */
const SECRET_KEY = /token|secret|password|authorization|api[-_]?key|cookie/i;

/** Replaces secret-looking fields with "[redacted]" so that no log line carries a credential. */
export function redact(value: unknown, depth = 0): unknown {
  if (depth > 6 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => redact(item, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    const safe = SECRET_KEY.test(key) ? '[redacted]' : redact(inner, depth + 1);
    Object.defineProperty(out, key, { value: safe, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** A logger writing one JSON line per record; the sink defaults to stderr. */
export function createLogger(options: { tag?: string; level?: LogLevel; sink?: LogSink } = {}): Logger {
  const sink = options.sink ?? { write: (line: string) => process.stderr.write(line) };
  const minimum = LEVELS[options.level ?? 'info'];
  const tag = options.tag;
  const emit = (level: LogLevel, message: string, fields?: LogFields): void => {
    if (LEVELS[level] < minimum) return;
    const record = { time: new Date().toISOString(), level, ...(tag ? { tag } : {}), message, ...(fields ? (redact(fields) as LogFields) : {}) };
    sink.write(`${JSON.stringify(record)}\n`);
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    child: (child) => createLogger({ ...options, tag: tag ? `${tag}:${child}` : child }),
  };
}

/** A logger that drops everything, for tests and benchmarks. */
export const silentLogger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  child: () => silentLogger,
};
