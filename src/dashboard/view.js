// @ts-check
/** @import { Kid } from "./html.js" */
import { out, Unauthorized } from "./api.js";
import { html, render } from "./html.js";

// The page's view (#view in src/api/dashboard.ts): the runs list or a run's page, and under it what
// went wrong the last time the page asked the API, until an answer comes again.

const view = /** @type {HTMLElement} */ (document.getElementById("view"));
/** @type {() => Kid} */
let page = () => null;
let failure = "";

function draw() {
	if (out()) return;
	render(
		html`${page()}${failure ? html`<p class="error" id="failure">${failure}</p>` : null}`,
		view,
	);
}

/** Draws `what` as the view, now and whenever the view is drawn again. @param {() => Kid} what */
export function show(what) {
	page = what;
	draw();
}

/** An answer again: a failure shown before is over. */
export function answered() {
	if (!failure) return;
	failure = "";
	draw();
}

/** Says what went wrong under the view; a refused token says it on the login form instead. @param {unknown} err */
export function fail(err) {
	if (err instanceof Unauthorized || out()) return;
	failure = /** @type {Error} */ (err).message;
	draw();
}

/** Empties the view: the page was signed out. */
export const clear = () => render(null, view);
