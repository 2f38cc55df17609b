import { h, type VNode } from 'preact';
import htm from 'htm';

/**
 * Preact with htm: templates are tagged strings, and what is put into them is always a value (text
 * stays text, never parsed as HTML). Each template here has one root element, hence one VNode.
 */
export const html = htm.bind(h) as (strings: TemplateStringsArray, ...values: unknown[]) => VNode;
