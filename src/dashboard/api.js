// @ts-check
/** @import { z } from "zod" */
/** @import { whoamiAnswer } from "../api/answers" */

// The API as the dashboard reads it: the token kept in the browser, every request made with it, what
// the token may do (GET /api/whoami), and a refused token signing the page out
// (docs/dashboard.md › What the token decides).

const KEY = "lisaToken";

/** The token the page keeps (pasted, or traded for a sign-in link's code). */
export const token = () => localStorage.getItem(KEY);
/** @param {string} value */
export const keepToken = (value) => localStorage.setItem(KEY, value);

/** @returns {Record<string, string>} */
export const authorization = () => ({ authorization: `Bearer ${token()}` });

/** The API refused the token: the page is signed out. */
export class Unauthorized extends Error {}

// A refused token signs the page out: what it still had under way (the run's stream, a list or
// stats request) stops, and nothing is drawn again under the login form.
const signedOut = new AbortController();
/** Aborts every request of the page once it is signed out. */
export const signal = signedOut.signal;
/** Whether the page was signed out. */
export const out = () => signedOut.signal.aborted;
/** @type {(() => void)[]} */
const onOut = [];
/** What the page does when it is signed out (shows the login form, clears the views). @param {() => void} f */
export const onSignOut = (f) => {
	onOut.push(f);
};

/** Signs the page out (once): the token is dropped. The error to throw. */
export function unauthorized() {
	if (!out()) {
		signedOut.abort();
		localStorage.removeItem(KEY);
		for (const f of onOut) f();
	}
	return new Unauthorized("unauthorized");
}

/**
 * An API answer's JSON; a refusal thrown as what was wrong, the API's `issues` too (as
 * src/cli/client.ts says it).
 * @template T
 * @param {string} path
 * @param {RequestInit} [init]
 * @returns {Promise<T>}
 */
export async function api(path, init) {
	const res = await fetch(path, { ...init, headers: authorization(), signal });
	if (res.status === 401) throw unauthorized();
	const body = await res.json().catch(() => ({}));
	if (!res.ok)
		throw new Error(
			[body.error, ...(body.issues || [])].filter(Boolean).join("; ") || res.statusText,
		);
	return body;
}

/** What the token may do: actions are offered to "admin" only. */
let may = "read";
export const role = () => may;

/** Asks the API what the token may do; a server without /api/whoami: nothing more than reading. */
export async function whoami() {
	try {
		/** @type {z.output<typeof whoamiAnswer>} */
		const me = await api("/api/whoami");
		may = me.role;
	} catch (err) {
		if (err instanceof Unauthorized) throw err;
	}
}
