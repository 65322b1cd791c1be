// A private git host over smart HTTP: git's own `git http-backend` (CGI) behind Basic auth, so
// clones and pushes really authenticate, as they do against github.com with a token. It records
// every request (path, user, whether it was authorised) so tests can check where a token went.
import { spawn } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";

interface GitHttpRequest {
	method: string;
	/** Path and query as requested: a token in the URL would show here. */
	url: string;
	user?: string;
	authorized: boolean;
}

export interface GitHttpServer {
	/** http://127.0.0.1:<port>; a repo `<root>/api.git` is `${url}/api.git`. */
	readonly url: string;
	readonly requests: GitHttpRequest[];
	stop(): Promise<void>;
}

export async function startGitHttp(opts: {
	/** The directory holding the bare repositories (read per request: it may be set later). */
	root: string;
	/** The password every request must carry (the user name is not checked, as on GitHub). */
	token: string;
	/**
	 * Other passwords it takes, and where: a GitHub installation token, for the repositories in its
	 * scope (`repo` is the request's first path segment, `write` a push).
	 */
	authorize?: (password: string, repo: string, write: boolean) => boolean;
}): Promise<GitHttpServer> {
	const requests: GitHttpRequest[] = [];
	const server = http.createServer((req, res) => {
		const url = new URL(req.url ?? "/", "http://localhost");
		const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? "")?.[1];
		const [user, password] = basic
			? Buffer.from(basic, "base64").toString("utf8").split(/:(.*)/s)
			: [];
		const write =
			url.pathname.endsWith("/git-receive-pack") ||
			url.searchParams.get("service") === "git-receive-pack";
		const repo = url.pathname.split("/")[1] ?? "";
		const authorized =
			password === opts.token ||
			(password !== undefined && opts.authorize?.(password, repo, write) === true);
		requests.push({ method: req.method ?? "GET", url: req.url ?? "/", user, authorized });
		if (!authorized) {
			res.writeHead(401, { "www-authenticate": 'Basic realm="lisa-git-double"' });
			res.end("authentication required\n");
			return;
		}
		const cgi = spawn("git", ["http-backend"], {
			env: {
				PATH: process.env.PATH,
				GIT_PROJECT_ROOT: opts.root,
				GIT_HTTP_EXPORT_ALL: "1",
				PATH_INFO: url.pathname,
				QUERY_STRING: url.search.slice(1),
				REQUEST_METHOD: req.method,
				CONTENT_TYPE: req.headers["content-type"] ?? "",
				...(req.headers["content-length"] ? { CONTENT_LENGTH: req.headers["content-length"] } : {}),
				HTTP_CONTENT_ENCODING: req.headers["content-encoding"] ?? "",
				GIT_PROTOCOL: String(req.headers["git-protocol"] ?? ""),
				REMOTE_USER: user ?? "",
				REMOTE_ADDR: "127.0.0.1",
			},
			stdio: ["pipe", "pipe", "inherit"],
		});
		req.pipe(cgi.stdin);
		// CGI answer: header lines, a blank line, then the body.
		let head = Buffer.alloc(0);
		let headersSent = false;
		cgi.stdout.on("data", (chunk: Buffer) => {
			if (headersSent) {
				res.write(chunk);
				return;
			}
			head = Buffer.concat([head, chunk]);
			const end = head.indexOf("\r\n\r\n");
			if (end < 0) return;
			let status = 200;
			const headers: Record<string, string> = {};
			for (const line of head.subarray(0, end).toString("utf8").split("\r\n")) {
				const [name, ...rest] = line.split(":");
				const value = rest.join(":").trim();
				if (name?.toLowerCase() === "status") status = Number.parseInt(value, 10);
				else if (name) headers[name] = value;
			}
			res.writeHead(status, headers);
			headersSent = true;
			res.write(head.subarray(end + 4));
		});
		cgi.on("close", () => {
			if (!headersSent) res.writeHead(500);
			res.end();
		});
	});
	await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
	const { port } = server.address() as AddressInfo;
	return {
		url: `http://127.0.0.1:${port}`,
		requests,
		stop: () =>
			new Promise<void>((resolve) => {
				server.close(() => resolve());
				server.closeAllConnections();
			}),
	};
}
