import { createHash, timingSafeEqual } from "node:crypto";
import type { MiddlewareHandler } from "hono";

/** What the token presented may do: everything, or only read (GET /api/whoami tells the dashboard). */
type Role = "admin" | "read";
export type AuthEnv = { Variables: { role: Role } };

const digest = (s: string) => createHash("sha256").update(s).digest();
const CHALLENGE = { "www-authenticate": 'Bearer realm="lisa"' };
const READS = new Set(["GET", "HEAD"]);

/**
 * `Authorization: Bearer <token>` on /api/*, compared in constant time (over digests, so lengths
 * leak nothing). The admin token may do everything; the read-only token (for dashboards) may only
 * read, and gets 403 elsewhere. Every other failure is 401 — including a malformed header (hono's
 * bearerAuth answers 400 there) — and without an admin token the API is closed.
 */
export function bearerToken(tokens: { admin?: string; read?: string }): MiddlewareHandler<AuthEnv> {
	const admin = tokens.admin ? digest(tokens.admin) : undefined;
	const read = tokens.read ? digest(tokens.read) : undefined;
	return async (c, next) => {
		if (!admin) return c.json({ error: "LISA_API_TOKEN is not set: the API is closed" }, 401);
		const header = c.req.header("authorization");
		const given = header?.match(/^Bearer\s+(\S.*)$/i)?.[1]?.trim();
		if (!given)
			return c.json(
				{ error: header ? "expected Authorization: Bearer <token>" : "missing bearer token" },
				401,
				CHALLENGE,
			);
		const presented = digest(given);
		// Both comparisons always run, so the timing tells nothing about which token matched.
		const isAdmin = timingSafeEqual(presented, admin);
		const isReader = read ? timingSafeEqual(presented, read) : false;
		if (!isAdmin && !isReader) return c.json({ error: "invalid bearer token" }, 401, CHALLENGE);
		if (!isAdmin && !READS.has(c.req.method))
			return c.json(
				{ error: "this token is read-only: actions need the admin token (LISA_API_TOKEN)" },
				403,
			);
		c.set("role", isAdmin ? "admin" : "read");
		await next();
	};
}
