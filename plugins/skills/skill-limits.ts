import { KernelError } from '../../core/index.js';

/** plugins.skills.config in quire.json, every field optional. */
export interface SkillsConfig {
  paths?: string[];
  promptTokenBudget?: number;
  maxBodyChars?: number;
  maxFileBytes?: number;
  maxSkillBytes?: number;
  maxSkillFiles?: number;
  maxArchiveBytes?: number;
  maxCompressionRatio?: number;
  /** Versions kept per skill (before each replace or removal) at most, and for how many days. */
  versionsKept?: number;
  versionsMaxAgeDays?: number;
}

export interface SkillLimits {
  promptTokenBudget: number;
  maxBodyChars: number;
  maxFileBytes: number;
  maxSkillBytes: number;
  maxSkillFiles: number;
  maxArchiveBytes: number;
  maxCompressionRatio: number;
}

/** The name and description limits of the SKILL.md format (as Claude Code and the Agent Skills spec set them). */
export const MAX_NAME_LENGTH = 64;
export const MAX_DESCRIPTION_LENGTH = 1024;
/** An archive expanding less than this is never called a bomb, whatever its ratio (a page of repeated text). */
export const RATIO_FLOOR_BYTES = 1024 * 1024;

export function limitsFrom(config: SkillsConfig): SkillLimits {
  return {
    promptTokenBudget: config.promptTokenBudget ?? 2000,
    maxBodyChars: config.maxBodyChars ?? 40_000,
    maxFileBytes: config.maxFileBytes ?? 256 * 1024,
    maxSkillBytes: config.maxSkillBytes ?? 5 * 1024 * 1024,
    maxSkillFiles: config.maxSkillFiles ?? 200,
    maxArchiveBytes: config.maxArchiveBytes ?? 20 * 1024 * 1024,
    maxCompressionRatio: config.maxCompressionRatio ?? 100,
  };
}

/** What can be wrong with a skill or a package of skills; each has its own message, and tests assert these. */
export type SkillProblem =
  | 'FRONT_MATTER_MISSING' | 'FRONT_MATTER_UNCLOSED' | 'YAML_INVALID' | 'FRONT_MATTER_NOT_MAPPING'
  | 'NAME_MISSING' | 'NAME_INVALID' | 'NAME_FOLDER_MISMATCH' | 'NAME_DUPLICATE'
  | 'DESCRIPTION_MISSING' | 'DESCRIPTION_INVALID' | 'DESCRIPTION_EMPTY' | 'DESCRIPTION_TOO_LONG'
  | 'BODY_TOO_LARGE' | 'NOT_TEXT' | 'FILE_TOO_LARGE' | 'SKILL_TOO_LARGE' | 'TOO_MANY_FILES'
  | 'PATH_ESCAPES' | 'PATH_ABSOLUTE' | 'PATH_INVALID' | 'PATH_DUPLICATE' | 'LINK' | 'NOT_A_FILE'
  | 'ARCHIVE_TOO_LARGE' | 'ARCHIVE_RATIO' | 'ARCHIVE_CORRUPT' | 'ARCHIVE_UNSUPPORTED' | 'ARCHIVE_ENCRYPTED'
  | 'NO_SKILL' | 'UNREADABLE' | 'SKILL_EXISTS' | 'SKILL_NOT_FOUND' | 'READ_ONLY_SKILL' | 'DOWNLOAD_FAILED' | 'VERSION_INVALID';

/** A refusal naming its problem in `details.problem` (and the path it concerns), written for the model and the person alike. */
export function skillError(problem: SkillProblem, message: string, details: Record<string, unknown> = {}): KernelError {
  const code = problem === 'SKILL_NOT_FOUND' ? 'NOT_FOUND' : problem === 'SKILL_EXISTS' ? 'CONFLICT' : 'INVALID_INPUT';
  return new KernelError(code, message, { details: { problem, ...details } });
}

/**
 * A download the remote server let down (an error status, no connection, no answer in time): 502 or 504,
 * not 400, since the URL was fine to ask for. Its problem is still DOWNLOAD_FAILED.
 */
export function remoteFailure(message: string, details: Record<string, unknown>, timedOut = false): KernelError {
  return new KernelError(timedOut ? 'UPSTREAM_TIMEOUT' : 'UPSTREAM_FAILED', message, { details: { problem: 'DOWNLOAD_FAILED', ...details } });
}

export function problemOf(error: unknown): SkillProblem | undefined {
  const details = (error as { details?: { problem?: unknown } }).details;
  return typeof details?.problem === 'string' ? (details.problem as SkillProblem) : undefined;
}
