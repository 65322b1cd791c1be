// @ts-check
import { keepToken } from "./api.js";

// Signing in (docs/dashboard.md › Signing in from a link): the page's login form (src/api/dashboard.ts)
// takes a pasted token; a printed link carries a one-time code (`/#code=…`, as `npm start` and `npm
// run demo` print it), never the token, since the browser's history keeps every address it opened.
// The page trades the code for the read-only token (POST /dashboard/sign-in), after which the code
// is spent.

const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (document.getElementById(id));
const login = /** @type {HTMLFormElement} */ ($("login"));

/** The link's one-time code, taken off the address bar. */
export function takeCode() {
	const code = new URLSearchParams(location.hash.slice(1)).get("code");
	if (code) history.replaceState(null, "", `${location.pathname}${location.search}`);
	return code;
}

/** Trades a link's code for the read-only token; a spent one is said so. @param {string} code */
export async function redeem(code) {
	const res = await fetch("/dashboard/sign-in", {
		method: "POST",
		headers: { "content-type": "application/json" },
		body: JSON.stringify({ code }),
	});
	if (res.ok) {
		/** @type {{ token: string }} */
		const body = await res.json();
		keepToken(body.token);
	} else $("spent").hidden = false;
}

/** Asks for a token; `then` runs once one was given. @param {() => void} then */
export function askForToken(then) {
	login.hidden = false;
	login.onsubmit = (e) => {
		e.preventDefault();
		keepToken(/** @type {HTMLInputElement} */ ($("token")).value.trim());
		login.hidden = true;
		$("refused").hidden = true;
		$("spent").hidden = true;
		then();
	};
}

/** Asks again, saying the token was refused. @param {() => void} then */
export function refused(then) {
	askForToken(then);
	$("refused").hidden = false;
}
