import { readFileSync } from "node:fs";
import path from "node:path";
import { readSettings } from "../config/settings";
import { CliError } from "./exit";

// How the CLI finds and talks to a running Lisa: --url / LISA_URL, --token / LISA_API_TOKEN /
// LISA_READ_TOKEN / the local stack's token file; API failures become one clear sentence.

export interface Connection {
	url: string;
	token?: string;
	/** Where the token came from (`--token`, a variable, the token file), for messages; never the token. */
	tokenFrom?: string;
	/** Where a token was looked for, in order (the token file of this machine's stack last). */
	lookedAt: string[];
}

export interface ConnectionFlags {
	url?: string;
	token?: string;
}

const set = (v: string | undefined) => (v?.trim() ? v.trim() : undefined);

export function resolveConnection(flags: ConnectionFlags, env: NodeJS.ProcessEnv): Connection {
	let settings: ReturnType<typeof readSettings>;
	try {
		settings = readSettings(env);
	} catch (err) {
		throw new CliError((err as Error).message);
	}
	const url = (
		set(flags.url) ??
		set(env.LISA_URL) ??
		`http://127.0.0.1:${settings.port || 8787}`
	).replace(/\/+$/, "");
	const file = path.join(settings.dataDir, "api-token");
	const lookedAt = ["--token", "LISA_API_TOKEN", "LISA_READ_TOKEN", file];
	if (set(flags.token)) return { url, token: set(flags.token), tokenFrom: "--token", lookedAt };
	for (const name of ["LISA_API_TOKEN", "LISA_READ_TOKEN"])
		if (set(env[name])) return { url, token: set(env[name]), tokenFrom: name, lookedAt };
	try {
		const token = set(readFileSync(file, "utf8"));
		if (token) return { url, token, tokenFrom: file, lookedAt };
	} catch {}
	return { url, lookedAt };
}

const TIMEOUT_MS = 10_000;

export interface Answer<T> {
	/** The body as the API sent it (for --json). */
	text: string;
	body: T;
}

export class LisaClient {
	constructor(readonly conn: Connection) {}

	/** GETs an API path; `notFound` is the message for a 404. */
	get<T>(
		p: string,
		query: Record<string, string | undefined> = {},
		notFound?: string,
	): Promise<Answer<T>> {
		return this.request<T>("GET", p, query, notFound);
	}

	/**
	 * POSTs to an API path, with `body` as JSON or without a body (the run actions); `notFound` is
	 * the message for a 404.
	 */
	post<T>(p: string, notFound?: string, body?: unknown): Promise<Answer<T>> {
		return this.request<T>("POST", p, {}, notFound, body);
	}

	private async request<T>(
		method: "GET" | "POST",
		p: string,
		query: Record<string, string | undefined>,
		notFound?: string,
		body?: unknown,
	): Promise<Answer<T>> {
		const url = new URL(`${this.conn.url}${p}`);
		for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, v);
		let res: Response;
		try {
			res = await fetch(url, {
				method,
				headers: {
					accept: "application/json",
					...(body === undefined ? {} : { "content-type": "application/json" }),
					...(this.conn.token ? { authorization: `Bearer ${this.conn.token}` } : {}),
				},
				...(body === undefined ? {} : { body: JSON.stringify(body) }),
				signal: AbortSignal.timeout(TIMEOUT_MS),
			});
		} catch (err) {
			throw unreachable(this.conn.url, err);
		}
		const text = await res.text();
		const answer = parseJson(text);
		if (res.ok) return { text, body: answer as T };
		throw refused(res.status, answer, this.conn, notFound);
	}
}

function parseJson(text: string): unknown {
	try {
		return JSON.parse(text);
	} catch {
		return text;
	}
}

export function unreachable(url: string, err: unknown): CliError {
	const e = err as Error & { cause?: { code?: string; message?: string } };
	if (e.name === "TimeoutError")
		return new CliError(`Lisa at ${url} did not answer within ${TIMEOUT_MS / 1000} s`);
	const code = e.cause?.code;
	if (code === "ECONNREFUSED" || code === "ENOTFOUND" || code === "EAI_AGAIN")
		return new CliError(`no Lisa at ${url}: start one with \`npm start\` or pass --url`);
	return new CliError(`could not reach Lisa at ${url}: ${e.cause?.message ?? e.message}`);
}

function apiMessage(body: unknown): string {
	if (typeof body === "string") return body.trim() || "no message";
	const b = body as { error?: string; issues?: string[] };
	return [b.error, ...(b.issues ?? [])].filter(Boolean).join("; ") || JSON.stringify(body);
}

const SET_TOKEN =
	"set LISA_API_TOKEN to the API token `npm start` printed (or LISA_READ_TOKEN to its read token)";

/** A 401, said by where the token came from: what was tried, and what to set. */
function tokenRefused(conn: Connection, said: string): string {
	const from = conn.tokenFrom;
	if (!from || !conn.token)
		return `Lisa at ${conn.url} needs a token, and none was found (looked at ${conn.lookedAt.join(", ")}): ${SET_TOKEN}`;
	const refusedHere = `Lisa at ${conn.url} refused the token`;
	if (from === "--token")
		return `${refusedHere} given with --token (Lisa said: ${said}): check it against the API token \`npm start\` printed, or its read token`;
	if (!from.startsWith("LISA_"))
		return `${refusedHere} in ${from} (Lisa said: ${said}): that file is the token of the stack started here; for another Lisa, ${SET_TOKEN}`;
	return `${refusedHere} in ${from} (Lisa said: ${said}): set ${from} to the ${from === "LISA_READ_TOKEN" ? "read" : "API"} token \`npm start\` printed`;
}

export function refused(
	status: number,
	body: unknown,
	conn: Connection,
	notFound?: string,
): CliError {
	if (status === 401) return new CliError(tokenRefused(conn, apiMessage(body)));
	if (status === 403) return new CliError(apiMessage(body));
	if (status === 404 && notFound) return new CliError(notFound);
	return new CliError(`Lisa answered ${status}: ${apiMessage(body)}`);
}
