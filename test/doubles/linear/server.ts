/**
 * A schema-faithful local double of Linear's GraphQL API for offline tests.
 *
 *   const linear = await startLinearDouble();
 *   const team = linear.addTeam({ key: "ENG", name: "Engineering" });
 *   const issue = linear.addIssue({ teamKey: "ENG", title: "Fix it", labels: ["lisa"] });
 *   const client = new LinearClient({ apiKey: linear.apiKey, apiUrl: linear.url });
 *   ...
 *   expect(linear.stateName(issue)).toBe("In Review");
 *   await linear.stop();
 *
 * Serves POST /graphql on 127.0.0.1 (the SDK accepts http:// only for local hosts); authenticates
 * the raw `Authorization: <apiKey>` header the SDK sends for API keys (a `Bearer <token>` works too).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { buffer } from "node:stream/consumers";
import { AUTHENTICATION_ERROR } from "./errors";
import { executeGraphQL, linearSchema } from "./execute";
import { resolvers } from "./resolvers";
import {
	type AddIssueInput,
	type AddTeamInput,
	type AddUserInput,
	type AgentSessionStatus,
	type DoubleAgentSession,
	type DoubleComment,
	type DoubleIssue,
	type DoubleLabel,
	type DoubleProject,
	type DoubleRelation,
	type DoubleTeam,
	type DoubleUser,
	type DoubleWorkflowState,
	type IssueRelationType,
	type LinearDoubleState,
	LinearStore,
} from "./state";

export type * from "./state";

const DEFAULT_LINEAR_API_KEY = "lin_api_test_key_0123456789abcdef";

export interface LinearDoubleOptions {
	/** The accepted API key (default DEFAULT_LINEAR_API_KEY). */
	apiKey?: string;
	/** Default: a free port. */
	port?: number;
	/** The double's clock, for createdAt / updatedAt and relative date filters. */
	now?: () => Date;
}

interface LinearDoubleRequest {
	operationName?: string;
	query: string;
	variables: Record<string, unknown>;
	/** The HTTP status the double answered with. */
	status: number;
}

interface FailNextOptions {
	/** HTTP status (default 500). */
	status?: number;
	message?: string;
	/**
	 * Linear error type in `errors[0].extensions.type`; default by status: 429 "ratelimited",
	 * 500 "internal error", 401 "authentication error", 403 "forbidden", other 4xx "invalid
	 * input". Other 5xx answer a plain-text body (as a proxy would), which the SDK maps by status.
	 */
	type?: string;
	/** Retry-After seconds on a 429 (default 1). */
	retryAfterSeconds?: number;
}

export interface LinearDouble {
	/** `http://127.0.0.1:<port>/graphql`, for `new LinearClient({ apiKey, apiUrl: url })`. */
	readonly url: string;
	readonly apiKey: string;
	readonly port: number;
	/** Everything the double knows; tests may seed and mutate it directly. */
	readonly state: LinearDoubleState;
	/** Every GraphQL request received, in order. */
	readonly requests: LinearDoubleRequest[];
	addUser(input: AddUserInput): DoubleUser;
	/** Returns a copy of the team record plus its workflow states (in `state.teams` / `state.states`). */
	addTeam(input: AddTeamInput): DoubleTeam & { states: DoubleWorkflowState[] };
	/** A label on a team (id or key), or a workspace label for null. */
	addLabel(team: string | null, name: string, color?: string): DoubleLabel;
	addProject(name: string): DoubleProject;
	addIssue(input: AddIssueInput): DoubleIssue;
	/** `addRelation("ENG-1", "blocks", "ENG-2")`: ENG-1 blocks ENG-2. */
	addRelation(from: string, type: IssueRelationType, to: string): DoubleRelation;
	/** A comment on the issue, by the viewer unless `userId` is given. */
	addComment(
		issue: string,
		body: string,
		opts?: { userId?: string; parentId?: string | null; agentSessionId?: string | null },
	): DoubleComment;
	addAgentSession(opts: {
		issue?: string;
		commentId?: string | null;
		creatorId?: string | null;
		status?: AgentSessionStatus;
		id?: string;
	}): DoubleAgentSession;
	/** The issue by UUID or identifier; throws when there is none. */
	issue(idOrIdentifier: string): DoubleIssue;
	stateName(issue: DoubleIssue | string): string;
	labelNames(issue: DoubleIssue | string): string[];
	/** Make the next `n` HTTP requests fail (before authentication and execution). */
	failNext(n: number, opts?: FailNextOptions): void;
	stop(): Promise<void>;
}

function sendJson(
	res: ServerResponse,
	status: number,
	body: unknown,
	headers: Record<string, string> = {},
): void {
	const text = JSON.stringify(body);
	res.writeHead(status, {
		"content-type": "application/json; charset=utf-8",
		"content-length": Buffer.byteLength(text),
		...headers,
	});
	res.end(text);
}

const DEFAULT_FAILURE_TYPES: Record<number, string> = {
	400: "invalid input",
	401: "authentication error",
	403: "forbidden",
	429: "ratelimited",
	500: "internal error",
};

function sendFailure(res: ServerResponse, opts: FailNextOptions): number {
	const status = opts.status ?? 500;
	const type = opts.type ?? DEFAULT_FAILURE_TYPES[status] ?? (status < 500 ? "invalid input" : "");
	const message = opts.message ?? `Injected failure (HTTP ${status})`;
	if (!type) {
		res.writeHead(status, { "content-type": "text/plain; charset=utf-8" });
		res.end(message);
		return status;
	}
	const headers: Record<string, string> =
		status === 429
			? {
					"retry-after": String(opts.retryAfterSeconds ?? 1),
					"x-ratelimit-requests-remaining": "0",
				}
			: {};
	const code = type.toUpperCase().replace(/\s+/g, "_");
	sendJson(
		res,
		status,
		{ errors: [{ message, extensions: { type, code, statusCode: status } }] },
		headers,
	);
	return status;
}

export async function startLinearDouble(opts: LinearDoubleOptions = {}): Promise<LinearDouble> {
	const apiKey = opts.apiKey ?? DEFAULT_LINEAR_API_KEY;
	const store = new LinearStore(opts.now);
	const requests: LinearDoubleRequest[] = [];
	const failures: FailNextOptions[] = [];
	linearSchema(); // build once up front, so the first request is not slow

	async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
		const path = new URL(req.url ?? "/", "http://localhost").pathname;
		if (path !== "/graphql") return sendJson(res, 404, { errors: [{ message: "Not found" }] });
		if (req.method !== "POST")
			return sendJson(res, 405, { errors: [{ message: "Only POST is supported" }] });
		const raw = (await buffer(req)).toString("utf8");
		let body: { query?: unknown; variables?: unknown; operationName?: unknown };
		try {
			body = JSON.parse(raw);
		} catch {
			return sendJson(res, 400, { errors: [{ message: "Body is not JSON" }] });
		}
		const entry: LinearDoubleRequest = {
			query: typeof body.query === "string" ? body.query : "",
			variables: (body.variables as Record<string, unknown> | null) ?? {},
			status: 0,
			...(typeof body.operationName === "string" ? { operationName: body.operationName } : {}),
		};
		entry.operationName ??= /^\s*(?:query|mutation)\s+(\w+)/.exec(entry.query)?.[1];
		requests.push(entry);

		const failure = failures.shift();
		if (failure) {
			entry.status = sendFailure(res, failure);
			return;
		}
		const auth = (req.headers.authorization ?? "").replace(/^Bearer\s+/i, "");
		if (auth !== apiKey) {
			entry.status = 400;
			return sendJson(res, 400, { errors: [AUTHENTICATION_ERROR] });
		}
		const result = await executeGraphQL(
			resolvers,
			{ store },
			{ query: entry.query, variables: entry.variables, operationName: entry.operationName },
		);
		entry.status = result.status;
		sendJson(res, result.status, result.body, {
			"x-ratelimit-requests-limit": "5000",
			"x-ratelimit-requests-remaining": "4999",
		});
	}

	const server = createServer((req, res) => {
		handle(req, res).catch((err: unknown) => {
			if (!res.headersSent)
				sendJson(res, 500, {
					errors: [
						{
							message: `Linear double crashed: ${err instanceof Error ? err.message : String(err)}`,
							extensions: { type: "internal error", code: "INTERNAL_SERVER_ERROR" },
						},
					],
				});
		});
	});
	await new Promise<void>((resolve, reject) => {
		server.once("error", reject);
		server.listen(opts.port ?? 0, "127.0.0.1", () => resolve());
	});
	const port = (server.address() as AddressInfo).port;

	return {
		url: `http://127.0.0.1:${port}/graphql`,
		apiKey,
		port,
		state: store.state,
		requests,
		addUser: (input) => store.addUser(input),
		addTeam: (input) => store.addTeam(input),
		addLabel: (team, name, color) => store.addLabel(team, name, color),
		addProject: (name) => store.addProject(name),
		addIssue: (input) => store.addIssue(input),
		addRelation: (from, type, to) => store.addRelation(from, type, to),
		addComment: (issue, body, o) => store.addComment(issue, body, o),
		addAgentSession: (o) => store.addAgentSession(o),
		issue: (ref) => store.requireIssue(ref),
		stateName: (issue) => store.stateName(issue),
		labelNames: (issue) => store.labelNames(issue),
		failNext: (n, o = {}) => {
			for (let i = 0; i < n; i++) failures.push(o);
		},
		stop: () =>
			new Promise<void>((resolve, reject) => {
				server.close((err) => (err ? reject(err) : resolve()));
				server.closeAllConnections();
			}),
	};
}
