import { createHash, timingSafeEqual } from "node:crypto";
import type { MiddlewareHandler } from "hono";

const digest = (s: string) => createHash("sha256").update(s).digest();
const CHALLENGE = { "www-authenticate": 'Bearer realm="lisa"' };

/**
 * `Authorization: Bearer <token>` on /api/*, compared in constant time (over digests, so lengths
 * leak nothing). Every failure is 401 — including a malformed header (hono's bearerAuth answers
 * 400 there) — and without a configured token the API is closed.
 */
export function bearerToken(token: string | undefined): MiddlewareHandler {
	const expected = token ? digest(token) : undefined;
	return async (c, next) => {
		if (!expected) return c.json({ error: "LISA_API_TOKEN is not set: the API is closed" }, 401);
		const header = c.req.header("authorization");
		const given = header?.match(/^Bearer\s+(\S.*)$/i)?.[1]?.trim();
		if (!given)
			return c.json(
				{ error: header ? "expected Authorization: Bearer <token>" : "missing bearer token" },
				401,
				CHALLENGE,
			);
		if (!timingSafeEqual(digest(given), expected))
			return c.json({ error: "invalid bearer token" }, 401, CHALLENGE);
		await next();
	};
}
