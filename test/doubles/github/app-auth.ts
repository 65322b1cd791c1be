import { createVerify, randomBytes } from "node:crypto";

// GitHub App authentication as github.com does it, for the double: the App signs a JWT (RS256, `iss`
// its id, at most ten minutes) with its private key; with it, it finds an installation and mints
// installation tokens, each limited to some of the installation's repositories and permissions
// and valid for an hour. The double and the git host double ask `scopeOf` what a token may do.

type Level = "read" | "write";
export type Permissions = Record<string, Level>;

/** What a token may do: every repository (a personal token) or those listed, with these permissions. */
export interface TokenScope {
	/** "owner/name", lower-cased; null: every repository the token's user can reach. */
	repos: Set<string> | null;
	/** null: every permission (a personal token). */
	permissions: Permissions | null;
	expiresAt: number;
}

export interface AppIdentity {
	id: number;
	slug: string;
	/** PEM of the App's public key: the JWTs it signs are checked with it. */
	publicKey: string;
	/** The installation: its id, the repositories it covers ("owner/name"), its permissions. */
	installation: { id: number; repos: string[]; permissions: Permissions };
}

const HOUR_MS = 3_600_000;

/** Whether `jwt` is the App's: RS256 over header.payload with its key, `iss` its id, and not expired. */
export function verifyAppJwt(jwt: string, app: AppIdentity, now = Date.now()): boolean {
	const [header, payload, signature] = jwt.split(".");
	if (!header || !payload || !signature) return false;
	try {
		const h = JSON.parse(Buffer.from(header, "base64url").toString("utf8")) as { alg?: string };
		if (h.alg !== "RS256") return false;
		const ok = createVerify("RSA-SHA256")
			.update(`${header}.${payload}`)
			.verify(app.publicKey, Buffer.from(signature, "base64url"));
		if (!ok) return false;
		const p = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as {
			iss?: unknown;
			iat?: number;
			exp?: number;
		};
		const seconds = now / 1000;
		return (
			String(p.iss) === String(app.id) &&
			typeof p.exp === "number" &&
			typeof p.iat === "number" &&
			p.exp > seconds &&
			p.iat <= seconds + 60 &&
			p.exp - p.iat <= 600 + 60
		);
	} catch {
		return false;
	}
}

/** The installation tokens the double minted, and what each may do. */
export class InstallationTokens {
	private readonly tokens = new Map<string, TokenScope>();

	/**
	 * Mints a token for the installation: the repositories asked for (all of the installation's by
	 * default) and the permissions asked for (all of its by default). Asking for more than it has is
	 * refused, as GitHub refuses it (422).
	 */
	mint(
		app: AppIdentity,
		ask: { repositories?: string[]; permissions?: Permissions },
		now = Date.now(),
	): { token: string; scope: TokenScope } | { error: string } {
		const installed = app.installation.repos.map((r) => r.toLowerCase());
		const owner = installed[0]?.split("/")[0] ?? "";
		const repos = (ask.repositories ?? installed.map((r) => r.split("/")[1] ?? "")).map((r) =>
			(r.includes("/") ? r : `${owner}/${r}`).toLowerCase(),
		);
		const missing = repos.filter((r) => !installed.includes(r));
		if (missing.length)
			return {
				error: `There is at least one repository that does not exist or is not accessible to the parent installation.`,
			};
		const permissions = ask.permissions ?? app.installation.permissions;
		for (const [name, level] of Object.entries(permissions)) {
			const has = app.installation.permissions[name];
			if (!has || (level === "write" && has !== "write"))
				return { error: `The permissions requested are not granted to this installation.` };
		}
		const token = `ghs_${randomBytes(18).toString("base64url").replace(/[-_]/g, "x")}`;
		const scope: TokenScope = { repos: new Set(repos), permissions, expiresAt: now + HOUR_MS };
		this.tokens.set(token, scope);
		return { token, scope };
	}

	/** What a minted token may do, while it is valid. */
	scopeOf(token: string, now = Date.now()): TokenScope | undefined {
		const scope = this.tokens.get(token);
		return scope && scope.expiresAt > now ? scope : undefined;
	}

	/** Every token minted so far, with what it may do. */
	minted(): [token: string, scope: TokenScope][] {
		return [...this.tokens];
	}

	/** Whether a token may fetch (`write`: push to) the repository `ownerRepo` over git. */
	allowsGit(token: string, ownerRepo: string, write: boolean): boolean {
		const scope = this.scopeOf(token);
		return (
			!!scope &&
			(!scope.repos || scope.repos.has(ownerRepo.toLowerCase())) &&
			(!write || !scope.permissions || scope.permissions.contents === "write")
		);
	}

	/** Ends a token early (tests: an expired token). */
	expire(token: string): void {
		const scope = this.tokens.get(token);
		if (scope) scope.expiresAt = 0;
	}
}

/**
 * The permission a REST request needs, by GitHub's documented mapping for the routes Lisa uses:
 * pulls and their reviews (pull_requests), issues and their comments (issues), contents, refs,
 * branches and commits (contents), check runs and suites (checks), Actions (actions); reading a
 * repository itself needs only metadata, which every token has.
 */
function permissionFor(method: string, rest: string): { name: string; level: Level } {
	const level: Level = method === "GET" || method === "HEAD" ? "read" : "write";
	const name = /^\/pulls\b/.test(rest)
		? "pull_requests"
		: /^\/issues\b/.test(rest)
			? "issues"
			: /^\/(check-runs|check-suites)\b|^\/commits\/[^/]+\/(check-runs|check-suites|status)/.test(
						rest,
					)
				? "checks"
				: /^\/actions\b/.test(rest)
					? "actions"
					: /^\/(contents|git|branches|commits|compare|merges)\b/.test(rest)
						? "contents"
						: "metadata";
	return { name, level: name === "metadata" ? "read" : level };
}

/** Whether `scope` allows `method` on `/repos/{owner}/{repo}{rest}`. */
export function allows(
	scope: TokenScope,
	ownerRepo: string,
	method: string,
	rest: string,
): boolean {
	if (scope.repos && !scope.repos.has(ownerRepo.toLowerCase())) return false;
	if (!scope.permissions) return true;
	const need = permissionFor(method, rest);
	if (need.name === "metadata") return true;
	const has = scope.permissions[need.name];
	return has === "write" || (has === "read" && need.level === "read");
}
