import { createHash, randomBytes } from "node:crypto";
import type { Context } from "hono";
import type { Settings } from "../config/settings";

// The dashboard's sign-in links (docs/dashboard.md › Signing in from a link): `npm start` and `npm
// run demo` print `/#code=<one-time code>`, never the token, because a browser's history keeps
// every URL it opened (the fragment too). The page trades the code for the read-only token with a
// POST; a code works once, within SIGN_IN_CODE_TTL_MS.

/** How long a printed sign-in code works. */
export const SIGN_IN_CODE_TTL_MS = 10 * 60_000;

const key = (code: string) => createHash("sha256").update(code).digest("hex");

/**
 * The sign-in codes of the process that prints them and serves the dashboard (the local stack).
 * Codes are kept by their SHA-256: a lookup's timing says nothing about a code, and the map holds
 * no code itself. Spending is one synchronous get and delete, so a code is spent once.
 */
export class SignInCodes {
	private readonly expiries = new Map<string, number>();

	constructor(private readonly now: () => number = Date.now) {}

	/** A new code: 192 random bits, base64url. */
	issue(): string {
		const now = this.now();
		for (const [k, expires] of this.expiries) if (expires <= now) this.expiries.delete(k);
		const code = randomBytes(24).toString("base64url");
		this.expiries.set(key(code), now + SIGN_IN_CODE_TTL_MS);
		return code;
	}

	/** True once for a code issued here and not expired; every later try, and any other code, is false. */
	spend(code: string): boolean {
		const k = key(code);
		const expires = this.expiries.get(k);
		this.expiries.delete(k);
		return expires !== undefined && this.now() < expires;
	}
}

const REFUSED =
	"this sign-in link was used already, has expired or is not this Lisa's: paste the read-only token (LISA_READ_TOKEN)";

/**
 * `POST /dashboard/sign-in` `{"code": "…"}` → `{"token": <read-only token>}`, or 401. JSON only, so
 * a page on another origin cannot post it without a preflight, which this route never allows.
 */
export async function signIn(c: Context, deps: { settings: Settings; signInCodes?: SignInCodes }) {
	if (!c.req.header("content-type")?.startsWith("application/json"))
		return c.json({ error: "expected a JSON body" }, 415);
	const body = await c.req.json().catch(() => undefined);
	const code = typeof body?.code === "string" && body.code.length <= 64 ? body.code : undefined;
	const token = deps.settings.readToken;
	if (!code || !token || !deps.signInCodes?.spend(code)) return c.json({ error: REFUSED }, 401);
	// The answer holds the token: no cache keeps it.
	return c.json({ token }, 200, { "cache-control": "no-store" });
}
