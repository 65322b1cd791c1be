import { createServer as createHttpServer, request, type Server } from "node:http";
import { type AddressInfo, connect, createServer } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type Denial, EgressProxy, parseAuthority } from "./proxy";

// The egress proxy over real sockets: a site on this machine's loopback stands for an allowed host.

let site: Server;
let sitePort: number;
let proxy: EgressProxy;
let proxyPort: number;
const denied: Denial[] = [];
beforeAll(async () => {
	site = createHttpServer((req, res) => res.end(`site saw ${req.method} ${req.url}`));
	await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
	sitePort = (site.address() as AddressInfo).port;
	// Setup may reach the site by its address, the agent only by the name "localhost".
	proxy = new EgressProxy(
		(phase) => (phase === "setup" ? ["127.0.0.1"] : ["localhost"]),
		(d) => denied.push(d),
	);
	const listener = createServer();
	await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
	proxyPort = (listener.address() as AddressInfo).port;
	proxy.serve(listener);
	return () => listener.close();
});
afterAll(async () => {
	proxy.close();
	await new Promise((resolve) => site.close(resolve));
});

/** A CONNECT through the proxy, then one GET in the tunnel: the proxy's status and what came back. */
function tunnel(authority: string): Promise<{ status: number; body: string }> {
	return new Promise((resolve, reject) => {
		const req = request({ port: proxyPort, method: "CONNECT", path: authority });
		req.on("connect", (res, socket) => {
			if (res.statusCode !== 200) {
				let body = "";
				socket.on("data", (b) => {
					body += b;
				});
				socket.on("close", () => resolve({ status: res.statusCode ?? 0, body }));
				return;
			}
			let body = "";
			socket.on("data", (b) => {
				body += b;
			});
			socket.on("end", () => resolve({ status: 200, body: body.split("\r\n\r\n")[1] ?? "" }));
			socket.write(`GET /in-tunnel HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`);
		});
		req.on("error", reject);
		req.end();
	});
}

function forwarded(url: string): Promise<{ status: number; body: string }> {
	return new Promise((resolve, reject) => {
		const req = request({ port: proxyPort, path: url }, async (res) => {
			let body = "";
			for await (const c of res) body += c;
			resolve({ status: res.statusCode ?? 0, body });
		});
		req.on("error", reject);
		req.end();
	});
}

it("tunnels and forwards to an allowed host, and refuses any other with 403, said once per host and phase", async () => {
	denied.length = 0;
	expect(await tunnel(`localhost:${sitePort}`)).toEqual({
		status: 200,
		body: "site saw GET /in-tunnel",
	});
	expect(await forwarded(`http://localhost:${sitePort}/page?q=1`)).toEqual({
		status: 200,
		body: "site saw GET /page?q=1",
	});
	const refused = await tunnel(`127.0.0.1:${sitePort}`);
	expect(refused.status).toBe(403);
	await tunnel(`127.0.0.1:${sitePort}`);
	expect((await forwarded(`http://127.0.0.1:${sitePort}/`)).status).toBe(403);
	// Only http:// is forwarded: an https:// URL must come as a tunnel, and a path alone is no target.
	expect((await forwarded(`https://localhost:${sitePort}/`)).status).toBe(403);
	expect((await forwarded("/relative")).status).toBe(403);
	expect(denied).toEqual([{ host: "127.0.0.1", port: sitePort, phase: "agent" }]);
});

it("lets the setup commands reach what their phase allows, and the agent after them only its own", async () => {
	denied.length = 0;
	const during = await proxy.during("setup", () => tunnel(`127.0.0.1:${sitePort}`));
	expect(during.status).toBe(200);
	expect((await tunnel(`127.0.0.1:${sitePort}`)).status).toBe(403);
	// The agent's refusal of that host was said by the test before: once per host and phase.
	expect(denied).toEqual([]);
});

it("answers an allowed host that does not answer with 502, and a malformed target with 403", async () => {
	const closed = createServer();
	await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
	const port = (closed.address() as AddressInfo).port;
	await new Promise((resolve) => closed.close(resolve));
	expect((await tunnel(`localhost:${port}`)).status).toBe(502);
	expect((await tunnel("localhost")).status).toBe(403);
	expect(parseAuthority("[::1]:443")).toEqual({ host: "::1", port: 443 });
	expect(parseAuthority("host:0")).toBeUndefined();
	expect(parseAuthority("a:b:1")).toBeUndefined();
	// A raw client that sends nothing after CONNECT is answered and closed, not left hanging.
	const raw = connect(proxyPort, "127.0.0.1");
	raw.write("CONNECT nowhere.invalid:443 HTTP/1.1\r\n\r\n");
	const answer = await new Promise<string>((resolve) => {
		let s = "";
		raw.on("data", (b) => {
			s += b;
		});
		raw.on("close", () => resolve(s));
	});
	expect(answer).toMatch(/^HTTP\/1\.1 403 Forbidden/);
});
