import {
	createServer,
	type IncomingMessage,
	request,
	type Server,
	type ServerResponse,
} from "node:http";
import { connect, type Server as Listener, type Socket } from "node:net";
import type { Duplex } from "node:stream";
import { type EgressPhase, hostAllowed, normalHost } from "../../domain/egress";

// The agent's only way out of its network namespace (docs/security.md › Security): an HTTP proxy in
// the task that opens a tunnel (CONNECT) or forwards a plain http:// request only to a host on the
// phase's allow-list, resolving the name itself — the namespace has no resolver. Anything else is
// refused with 403, and said once per host and phase through `onDenied`.

export interface Denial {
	host: string;
	port: number;
	phase: EgressPhase;
}

export class EgressProxy {
	private readonly server: Server;
	private phase: EgressPhase = "agent";
	private readonly said = new Set<string>();

	constructor(
		private readonly allowed: (phase: EgressPhase) => readonly string[],
		private readonly onDenied: (d: Denial) => void,
	) {
		this.server = createServer((req, res) => this.forward(req, res));
		this.server.on("connect", (req: IncomingMessage, socket: Duplex, head: Buffer) =>
			this.tunnel(req, socket as Socket, head),
		);
	}

	/** Serves the connections `listener` accepts (one inside the agent's namespace). */
	serve(listener: Listener): void {
		listener.on("connection", (s: Socket) => this.server.emit("connection", s));
	}

	/** Runs `work` with `phase`'s allow-list (the setup commands get the registries too). */
	async during<T>(phase: EgressPhase, work: () => Promise<T>): Promise<T> {
		const before = this.phase;
		this.phase = phase;
		try {
			return await work();
		} finally {
			this.phase = before;
		}
	}

	close(): void {
		this.server.closeAllConnections();
		this.server.close();
	}

	private permits(host: string, port: number): boolean {
		if (hostAllowed(host, port, this.allowed(this.phase))) return true;
		const key = `${this.phase} ${normalHost(host)}:${port}`;
		if (!this.said.has(key)) {
			this.said.add(key);
			this.onDenied({ host: normalHost(host), port, phase: this.phase });
		}
		return false;
	}

	private refusal(host: string): string {
		return `Lisa's egress proxy refused ${host}: not on this step's allow-list (repos[].network.allow)\n`;
	}

	private tunnel(req: IncomingMessage, client: Socket, head: Buffer): void {
		client.on("error", () => {});
		const target = parseAuthority(req.url ?? "");
		if (!target || !this.permits(target.host, target.port)) {
			const body = this.refusal(target?.host ?? String(req.url));
			client.end(
				`HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
			);
			return;
		}
		let open = false;
		const upstream = connect(target.port, target.host, () => {
			open = true;
			client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
			if (head.length) upstream.write(head);
			upstream.pipe(client);
			client.pipe(upstream);
		});
		upstream.on("error", (err) => {
			if (!open && client.writable)
				client.end(`HTTP/1.1 502 Bad Gateway\r\nconnection: close\r\n\r\n${err.message}\n`);
			else client.destroy();
		});
		client.on("close", () => upstream.destroy());
	}

	private forward(req: IncomingMessage, res: ServerResponse): void {
		let url: URL | undefined;
		try {
			url = new URL(req.url ?? "");
		} catch {}
		if (url?.protocol !== "http:" || !this.permits(url.hostname, Number(url.port || 80))) {
			res.writeHead(403, { "content-type": "text/plain" });
			res.end(this.refusal(url?.hostname ?? "a request that names no http:// URL"));
			return;
		}
		const { "proxy-connection": _, "proxy-authorization": __, ...headers } = req.headers;
		const out = request(url, { method: req.method, headers }, (answer) => {
			res.writeHead(answer.statusCode ?? 502, answer.headers);
			answer.pipe(res);
		});
		out.on("error", (err) => {
			if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
			res.end(`${err.message}\n`);
		});
		req.pipe(out);
	}
}

/** `host:port` of a CONNECT request (`[v6]:port` too), or undefined. */
export function parseAuthority(authority: string): { host: string; port: number } | undefined {
	const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]\s]+):(\d{1,5})$/.exec(authority);
	const port = Number(m?.[2]);
	if (!m?.[1] || !(port > 0 && port < 65536)) return undefined;
	return { host: normalHost(m[1]), port };
}
