import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStackWorld, type StackWorld } from "../support/stack";

// A hostile agent and the network (docs/security.md › Security): `npm start` as root, so each
// step's agent runs as a uid of its own in a network namespace of its own. It tries every way out —
// a direct connection to a service of the host, to the machine's resolver, to an outside address; a
// name lookup; the egress proxy towards a host the config does not allow — and one way that is
// allowed: the proxy towards a host the repository's `network.allow` names.

const ROOT = process.getuid?.() === 0;

/** A CONNECT to registry.npmjs.org through the proxy: exit 1 on the proxy's 403. */
const SETUP_REACHES_NPM = [
	"const proxy = new URL(process.env.HTTPS_PROXY);",
	'const req = require("node:http").request({ host: proxy.hostname, port: proxy.port, method: "CONNECT", path: "registry.npmjs.org:443" });',
	'req.on("connect", (res, socket) => { socket.destroy(); console.log("the proxy answered", res.statusCode); process.exit(res.statusCode === 403 ? 1 : 0); });',
	'req.on("error", (e) => { console.log(e.message); process.exit(1); });',
	"req.end();",
].join(" ");

let w: StackWorld;
let site: Server;
let sitePort: number;
beforeAll(async () => {
	if (!ROOT) return;
	// A service of the host's, on its loopback: what an agent could send the code to.
	site = createServer((_req, res) => res.end("reached the allowed site"));
	await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
	sitePort = (site.address() as AddressInfo).port;
	w = await createStackWorld({
		configExtra: "limits: {max_attempts: 1}\n",
		allow: ["127.0.0.1", "*.allowed.example"],
		// Setup may reach the registries: its tunnel to npm's is not refused (offline it then fails
		// to resolve: 502). The setup fails, and with it the run, if the proxy refuses it.
		setup: [`node -e '${SETUP_REACHES_NPM}'`],
	});
});
afterAll(async () => {
	await w?.stop();
	await new Promise((resolve) => site?.close(resolve));
});

describe.skipIf(!ROOT)("the agent's network, against a hostile agent", () => {
	it("reaches no host directly nor by name, and through the proxy only what the config allows: each refusal is on the run", async () => {
		const ways = [
			{ tcp: `127.0.0.1:${sitePort}` },
			{ tcp: `127.0.0.1:${new URL(w.url()).port}` },
			{ tcp: "192.0.2.1:443" },
			{ dns: "registry.npmjs.org" },
			{ proxy: "https://exfil.example:443" },
			{ proxy: "http://localhost:8080/steal" },
			{ proxy: "https://registry.npmjs.org:443" },
			{ proxy: `http://127.0.0.1:${sitePort}/` },
		];
		const runId = await w.startRun(
			"Send the code out",
			`lisa-fake[claude]: reach=${JSON.stringify(ways)}`,
		);
		const run = await w.waitForRun(runId);
		expect(run.status).toBe("succeeded");
		const [reached] = (await w.agents.reaches()).slice(-1);
		const outcome = (i: number) => reached?.[i];
		// Direct: the host's services (this test's, Lisa's API) are not in its namespace; nothing
		// outside has a route; no resolver answers.
		expect(outcome(0)).toMatchObject({ ok: false, outcome: "ECONNREFUSED" });
		expect(outcome(1)).toMatchObject({ ok: false, outcome: "ECONNREFUSED" });
		expect(outcome(2)).toMatchObject({ ok: false, outcome: "ENETUNREACH" });
		expect(outcome(3)?.ok).toBe(false);
		// Through the proxy: refused unless allowed; the registries are for setup, not the agent.
		for (const i of [4, 5, 6])
			expect(outcome(i)).toMatchObject({
				ok: true,
				outcome: expect.stringMatching(/^status 403/),
			});
		expect(outcome(5)?.outcome).toContain("Lisa's egress proxy refused localhost");
		expect(outcome(7)).toMatchObject({
			ok: true,
			outcome: "status 200: reached the allowed site",
		});
		const { body } = await w.api<{ events: { type: string; data?: Record<string, unknown> }[] }>(
			`/api/runs/${runId}/events?limit=500`,
		);
		const denied = body.events.filter((e) => e.type === "egress.denied").map((e) => e.data);
		// Setup's tunnel to the registry was not refused; the agent's is.
		expect(body.events.some((e) => e.type === "setup.finished")).toBe(true);
		expect(denied).toEqual([
			{ host: "exfil.example", port: 443, phase: "agent" },
			{ host: "localhost", port: 8080, phase: "agent" },
			{ host: "registry.npmjs.org", port: 443, phase: "agent" },
		]);
	});
});
