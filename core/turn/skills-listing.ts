import { createToken } from '../tokens.js';
import { countText } from './compaction-tokens.js';

/** One skill as the system prompt names it: what it is called and when to use it, never its body. */
export interface SkillListing {
  name: string;
  description: string;
}

/**
 * The skills the system prompt lists for a turn (DESIGN.md §5), already cut to the listing's token
 * budget. Provided by the skills plugin; only a native plugin may provide it (like every `agent.*`
 * capability), since what it returns is read into every turn's system prompt.
 */
export interface SkillsListingSource {
  promptListing(): Promise<readonly SkillListing[]>;
}

export const SKILLS_LISTING = createToken<SkillsListingSource>('agent.skills');

/** The line a skill takes in the system prompt; whitespace folded so that a description cannot start lines of its own. */
export function skillLine(skill: SkillListing): string {
  return `- ${skill.name}: ${skill.description.replace(/\s+/g, ' ').trim()}`;
}

/** Tokens of a skill's line in the prompt, counted with the tokenizer compaction uses (cl100k_base). */
export function skillLineTokens(skill: SkillListing): number {
  return countText(`${skillLine(skill)}\n`);
}
