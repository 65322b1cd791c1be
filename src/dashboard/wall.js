// @ts-check
import { html, render } from "./html.js";

// The wall view (docs/dashboard.md › The wall view): full width, large type, the active runs first,
// the four charts side by side; `?wall=1`, kept in the URL with the filters.

export const wall = new URLSearchParams(location.search).get("wall") === "1";

/** Sets the page's type for the view, and the header's switch to the other view (the rest of the URL kept). */
export function wallMode() {
	document.body.classList.toggle("wall", wall);
	const q = new URLSearchParams(location.search);
	if (wall) q.delete("wall");
	else q.set("wall", "1");
	const href = `${location.pathname}${q.size ? `?${q}` : ""}`;
	render(
		html`<a id="wall-toggle" href=${href}>${wall ? "normal view" : "wall view"}</a>`,
		/** @type {HTMLElement} */ (document.getElementById("modes")),
	);
}
