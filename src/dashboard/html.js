// @ts-check
import htm from "/assets/htm-3.1.1.mjs";
import { h, render } from "/assets/preact-11.2.0.mjs";

// The dashboard's one library: preact draws a view again as a change to the page already shown (an
// unfolded file list, a limit being typed, a scrolled pane stay as they are), and htm writes its
// markup as tagged templates. Both are their packages' own ES modules, served from /assets at their
// versions (src/api/assets.ts): no build step. What a template interpolates is text or a property,
// never markup: everything from the API is shown as text, and its URLs become links only through
// `link` (parts.js), which takes web addresses alone.

/** @typedef {import("/assets/preact-11.2.0.mjs").ComponentChildren} Kid What a view draws: nodes, text, nothing. */
/** @typedef {import("/assets/preact-11.2.0.mjs").VNode} VNode */

/**
 * Markup as a tagged template: html`<p class=${c}>${text}</p>` (several elements at its top: an
 * array of them).
 * @type {(strings: TemplateStringsArray, ...values: unknown[]) => VNode | VNode[]}
 */
export const html = htm.bind(h);

export { render };
