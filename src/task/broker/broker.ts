import { randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Server as Listener, Socket } from "node:net";
import { StringDecoder } from "node:string_decoder";
import { redact } from "../../domain/redact";
import { sumUsage, type TokenUsage } from "../../domain/usage";
import {
	billsTokens,
	forwardedQuery,
	type KeyHeader,
	keyHeader,
	type ModelApi,
	refusal,
	requestedModel,
	sentKey,
	servesPath,
	upstreamBody,
} from "./apis";
import { type AnswerUsage, noUsage, UsageReader } from "./usage";

// The model-API broker (docs/security.md › Security): the task serves the model APIs on loopback
// and forwards each request upstream with the real key, which stays in the task's process. The
// agent gets a lease: base URLs that point here and a placeholder key that is good for this lease
// only, while its run lasts. The broker forwards only its APIs' model paths, only the models the
// run may use, and only while the run's budget lasts; it counts the tokens from the answers
// themselves.

/** An endpoint a lease forwards to. */
export interface Upstream {
	api: ModelApi;
	/** The endpoint's base URL, as the CLI would have used it. */
	base: string;
	key: string;
	header: KeyHeader;
}

/** A request the broker refused, for the run's timeline. */
export interface Refusal {
	status: number;
	reason: string;
	path: string;
	model?: string;
}

export interface LeaseOptions {
	upstreams: readonly Upstream[];
	/** Whether the run may use `model`. */
	allows(model: string): boolean;
	/** Asked before each request with the lease's usage so far: why it is refused, if it is. */
	gate?(usage: TokenUsage): string | undefined;
	/** After each answer: the lease's usage so far and the model the last answer named. */
	onUsage?(usage: TokenUsage, servedModel?: string): void;
	onRefused?(refusal: Refusal): void;
}

export interface Lease {
	/** The placeholder key: good for this lease, while it is open, and nowhere else. */
	readonly key: string;
	/** The base URL that stands for `upstreams[i]`. */
	url(i: number): string;
	/** What the answers so far said they used, and the model the last one named. */
	usage(): { usage: TokenUsage; servedModel?: string; requests: number };
	/** Ends the lease: cuts the requests still running and counts what they had used. */
	close(): Promise<void>;
}

/** A request body larger than this is refused (a Claude Code request with a long history is a few MB). */
const MAX_BODY_BYTES = 64 * 1024 * 1024;
/** Requests one lease may have running at once; a CLI runs one or two. */
const MAX_RUNNING = 8;
// Request headers not passed on: the connection's own, the placeholder key, the encodings (the
// answer is read as it passes), and those that would bill elsewhere or trim the usage report.
const DROPPED_REQUEST = new Set([
	"host",
	"connection",
	"content-length",
	"transfer-encoding",
	"accept-encoding",
	"expect",
	"keep-alive",
	"upgrade",
	"authorization",
	"proxy-authorization",
	"x-api-key",
	"x-goog-api-key",
	"x-goog-fieldmask",
	"x-goog-user-project",
	"openai-organization",
	"openai-project",
	"x-http-method-override",
]);
// fetch has decoded the body already.
const DROPPED_ANSWER = new Set([
	"content-encoding",
	"content-length",
	"transfer-encoding",
	"connection",
	"keep-alive",
]);

/** A request on its way: what its answer used so far, and how to cut it. */
interface Running {
	reader?: UsageReader;
	cut: AbortController;
	done: Promise<void>;
}

interface OpenLease extends LeaseOptions {
	key: Buffer;
	answers: TokenUsage[];
	running: Set<Running>;
	servedModel?: string;
	closed: boolean;
}

export class Broker {
	private readonly leases = new Map<string, OpenLease>();

	private constructor(
		private readonly server: Server,
		readonly origin: string,
	) {}

	/** Listens on a free loopback port. */
	static async start(): Promise<Broker> {
		let broker: Broker | undefined;
		const server = createServer((req, res) => {
			broker?.handle(req, res).catch((e) => {
				if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
				res.end(JSON.stringify({ error: { message: `broker: ${(e as Error).message}` } }));
			});
		});
		await new Promise<void>((resolve, reject) => {
			server.once("error", reject);
			server.listen(0, "127.0.0.1", resolve);
		});
		broker = new Broker(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
		return broker;
	}

	get port(): number {
		return Number(new URL(this.origin).port);
	}

	/** Serves the connections `listener` accepts too (one inside the agent's network namespace). */
	serve(listener: Listener): void {
		listener.on("connection", (s: Socket) => this.server.emit("connection", s));
	}

	lease(options: LeaseOptions): Lease {
		const id = randomBytes(12).toString("hex");
		const key = `lisa-lease-${randomBytes(24).toString("hex")}`;
		const open: OpenLease = {
			...options,
			key: Buffer.from(key),
			answers: [],
			running: new Set(),
			closed: false,
		};
		this.leases.set(id, open);
		return {
			key,
			url: (i) => `${this.origin}/${id}/${i}`,
			usage: () => ({
				usage: sumUsage(open.answers),
				servedModel: open.servedModel,
				requests: open.answers.length,
			}),
			close: async () => {
				open.closed = true;
				this.leases.delete(id);
				for (const r of open.running) r.cut.abort();
				await Promise.all([...open.running].map((r) => r.done));
			},
		};
	}

	async close(): Promise<void> {
		this.server.closeAllConnections();
		await new Promise<void>((resolve) => this.server.close(() => resolve()));
	}

	private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
		const url = new URL(req.url ?? "/", this.origin);
		const [, id = "", index = "", ...rest] = url.pathname.split("/");
		const lease = this.leases.get(id);
		const upstream = lease?.upstreams[Number(index)];
		if (!lease || !upstream || !/^\d+$/.test(index)) {
			res.writeHead(404, { "content-type": "application/json" });
			res.end(
				JSON.stringify({
					error: { message: "broker: no such lease (it ended with its agent run)" },
				}),
			);
			return;
		}
		const path = `/${rest.join("/")}`;
		const refuse = (status: number, reason: string, model?: string) => {
			lease.onRefused?.({ status, reason, path, ...(model ? { model } : {}) });
			res.writeHead(status, { "content-type": "application/json" });
			res.end(
				JSON.stringify(
					refusal(upstream.api, status, `Lisa's model broker refused this request: ${reason}`),
				),
			);
		};
		const sent = Buffer.from(sentKey(req.headers, url.searchParams) ?? "");
		if (sent.length !== lease.key.length || !timingSafeEqual(sent, lease.key))
			return refuse(401, "the key is not this run's");
		if (req.method !== "POST" || !servesPath(upstream.api, path))
			return refuse(404, `${req.method} ${path} is not a model request the broker forwards`);
		const raw = await readBody(req);
		const body = raw && parseObject(raw);
		if (!body) return refuse(400, "the body is not a JSON object of at most 64 MiB");
		// The run may have ended while the body came.
		if (lease.closed) return refuse(404, "the lease ended with its agent run");
		const model = requestedModel(upstream.api, path, body);
		if (!model) return refuse(403, "the request names no model");
		if (!lease.allows(model))
			return refuse(403, `the model ${model} is not one this step may use`, model);
		if (lease.running.size >= MAX_RUNNING)
			return refuse(429, `more than ${MAX_RUNNING} requests at once`, model);
		const gated = lease.gate?.(spentSoFar(lease));
		if (gated) return refuse(403, gated, model);
		const running: Running = { cut: new AbortController(), done: Promise.resolve() };
		lease.running.add(running);
		running.done = this.forward(res, lease, running, {
			upstream,
			path,
			query: forwardedQuery(upstream.api, url.searchParams),
			headers: forwardedHeaders(req, upstream),
			body: JSON.stringify(upstreamBody(upstream.api, body)),
			size: raw.length,
		}).finally(() => lease.running.delete(running));
		await running.done;
	}

	/**
	 * Sends the request upstream and the answer back as it comes, reading its usage on the way. An
	 * agent that hangs up does not end the count: the answer is read to its end, or until the lease
	 * closes and cuts it.
	 */
	private async forward(
		res: ServerResponse,
		lease: OpenLease,
		running: Running,
		r: {
			upstream: Upstream;
			path: string;
			query: URLSearchParams;
			headers: Headers;
			body: string;
			size: number;
		},
	): Promise<void> {
		const { upstream } = r;
		const target = `${upstream.base.replace(/\/+$/, "")}${r.path}${r.query.size ? `?${r.query}` : ""}`;
		let answer: Response;
		try {
			answer = await fetch(target, {
				method: "POST",
				headers: r.headers,
				body: r.body,
				signal: running.cut.signal,
				// A redirect would take the key along (fetch keeps x-api-key across origins).
				redirect: "error",
			});
		} catch (e) {
			// Sent, perhaps answered: what it would have cost is counted from its size.
			this.record(lease, billed(r.path, { usage: noUsage() }, r.size));
			const message = redact(
				`broker: ${new URL(target).host} did not answer: ${(e as Error).message}`,
				[upstream.key],
			);
			if (!res.headersSent) res.writeHead(502, { "content-type": "application/json" });
			res.end(JSON.stringify(refusal(upstream.api, 502, message)));
			return;
		}
		const out: Record<string, string> = {};
		answer.headers.forEach((v, k) => {
			if (!DROPPED_ANSWER.has(k)) out[k] = v;
		});
		if (!answer.ok) {
			// An error may quote the key (some APIs echo part of it): read whole, redacted.
			const text = redact(await answer.text().catch(() => ""), [upstream.key]);
			res.writeHead(answer.status, out);
			res.end(text);
			return;
		}
		const streamed = answer.headers.get("content-type")?.includes("text/event-stream") === true;
		const reader = new UsageReader(upstream.api, streamed);
		running.reader = reader;
		const decoder = new StringDecoder("utf8");
		let gone = false;
		res.once("close", () => {
			gone = true;
		});
		res.writeHead(answer.status, out);
		let broken = false;
		try {
			for await (const chunk of answer.body ?? []) {
				reader.push(decoder.write(Buffer.from(chunk)));
				if (gone) continue;
				if (!res.write(chunk))
					await new Promise((resolve) => {
						res.once("drain", resolve);
						res.once("close", resolve);
					});
			}
			reader.push(decoder.end());
		} catch {
			// The upstream broke off, or the lease cut it: what came is still counted.
			broken = true;
		}
		this.record(lease, billed(r.path, reader.read(), r.size));
		if (broken) res.destroy();
		else res.end();
	}

	private record(lease: OpenLease, answer: AnswerUsage): void {
		lease.answers.push(answer.usage);
		if (answer.model) lease.servedModel = answer.model;
		if (!lease.closed) lease.onUsage?.(sumUsage(lease.answers), lease.servedModel);
	}
}

/** The lease's usage as the gate counts it: the answers, and what those still coming used so far. */
function spentSoFar(lease: OpenLease): TokenUsage {
	return sumUsage([
		...lease.answers,
		...[...lease.running].map((r) => r.reader?.peek() ?? noUsage()),
	]);
}

/**
 * An answer that billed tokens but reported none (cut before its report, or a report the agent
 * found a way to trim) counts its request's size as input: about four bytes a token.
 */
function billed(path: string, answer: AnswerUsage, size: number): AnswerUsage {
	const u = answer.usage;
	const reported = u.inputTokens + u.outputTokens + u.cacheReadTokens + u.cacheWriteTokens > 0;
	if (reported || !billsTokens(path)) return answer;
	return { ...answer, usage: { ...u, inputTokens: Math.ceil(size / 4) } };
}

function forwardedHeaders(req: IncomingMessage, upstream: Upstream): Headers {
	const headers = new Headers();
	for (const [k, v] of Object.entries(req.headers))
		if (v !== undefined && !DROPPED_REQUEST.has(k))
			headers.set(k, Array.isArray(v) ? v.join(", ") : v);
	headers.set(...keyHeader(upstream.header, upstream.key));
	headers.set("accept-encoding", "identity");
	return headers;
}

async function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
	const chunks: Buffer[] = [];
	let size = 0;
	for await (const chunk of req) {
		size += (chunk as Buffer).length;
		if (size > MAX_BODY_BYTES) return undefined;
		chunks.push(chunk as Buffer);
	}
	return Buffer.concat(chunks);
}

function parseObject(raw: Buffer): Record<string, unknown> | undefined {
	try {
		const body = JSON.parse(raw.toString("utf8")) as unknown;
		return typeof body === "object" && body !== null && !Array.isArray(body)
			? (body as Record<string, unknown>)
			: undefined;
	} catch {
		return undefined;
	}
}
