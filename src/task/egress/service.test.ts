import { type ChildProcess, spawn } from "node:child_process";
import { createServer, request, type Server } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";

// `agent.mjs egress-proxy` as AWS runs it (docs/deploying.md › The agent's egress): the task's
// entry point as a process of its own, with the allow-list of its environment; a site on this
// machine stands for an allowed host.

const ENTRY = fileURLToPath(new URL("../main.ts", import.meta.url));
const TSX = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;

function start(env: Record<string, string>): { child: ChildProcess; output: () => string } {
	const child = spawn(process.execPath, ["--import", TSX, ENTRY, "egress-proxy"], {
		env: { PATH: process.env.PATH, LOG_LEVEL: "info", ...env },
		stdio: ["ignore", "pipe", "pipe"],
	});
	let out = "";
	child.stdout?.on("data", (b: Buffer) => {
		out += b;
	});
	child.stderr?.on("data", (b: Buffer) => {
		out += b;
	});
	return { child, output: () => out };
}

let site: Server;
let sitePort: number;
let proxy: ReturnType<typeof start>;
let proxyPort: number;
beforeAll(async () => {
	site = createServer((_req, res) => res.end("the allowed site"));
	await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
	sitePort = (site.address() as AddressInfo).port;
	proxy = start({
		LISA_EGRESS_ALLOW: `localhost:${sitePort}, *.allowed.example`,
		LISA_EGRESS_PORT: "0",
	});
	const deadline = Date.now() + 30_000;
	while (
		!/"port":(\d+)/.test(proxy.output()) &&
		Date.now() < deadline &&
		proxy.child.exitCode === null
	)
		await new Promise((r) => setTimeout(r, 100));
	proxyPort = Number(/"port":(\d+)/.exec(proxy.output())?.[1]);
}, 40_000);
afterAll(async () => {
	proxy?.child.kill("SIGKILL");
	await new Promise((resolve) => site?.close(resolve));
});

const forwarded = (url: string) =>
	new Promise<string>((resolve, reject) => {
		const req = request({ port: proxyPort, path: url }, (res) => {
			let body = "";
			res.on("data", (c) => {
				body += c;
			});
			res.on("end", () => resolve(`${res.statusCode} ${body.trim()}`));
		});
		req.on("error", reject);
		req.end();
	});

it("serves the allow-list of its environment, and logs each host it refuses", async () => {
	expect(proxyPort).toBeGreaterThan(0);
	expect(await forwarded(`http://localhost:${sitePort}/`)).toBe("200 the allowed site");
	expect(await forwarded(`http://127.0.0.1:${sitePort}/`)).toMatch(
		/^403 Lisa's egress proxy refused 127\.0\.0\.1/,
	);
	const deadline = Date.now() + 5_000;
	while (!proxy.output().includes("egress denied") && Date.now() < deadline)
		await new Promise((r) => setTimeout(r, 50));
	const denied = proxy
		.output()
		.split("\n")
		.filter((l) => l.includes("egress denied"))
		.map((l) => JSON.parse(l));
	expect(denied).toMatchObject([{ host: "127.0.0.1", port: sitePort, msg: "egress denied" }]);
});

it("refuses to start on an allow-list it cannot read, saying what to write", async () => {
	const bad = start({ LISA_EGRESS_ALLOW: "https://pypi.org" });
	const code = await new Promise((resolve) => bad.child.on("exit", resolve));
	expect(code).toBe(1);
	expect(bad.output()).toContain(
		"LISA_EGRESS_ALLOW holds https://pypi.org: write host names, IPv4 addresses or *.domain, each with an optional :port",
	);
});
