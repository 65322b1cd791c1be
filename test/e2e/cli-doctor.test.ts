import { writeFile } from "node:fs/promises";
import { type AddressInfo, createServer, type Server, type Socket } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PINNED_CLIS, SHARED_DIR } from "../../src/local/agent-reach";
import { startGitHubDouble } from "../doubles/github/server";
import { closedPort, lisa } from "../support/cli";
import { createStackWorld, type StackWorld } from "../support/stack";
import { TRELLO_BOARD, testApp } from "../support/world";

// `lisa doctor` as a real process against the Linear, Trello and GitHub doubles, the fake agent
// CLIs on PATH, real git, and a running local stack for the API check.

const ROOT = process.getuid?.() === 0;
const literal = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
/** The check of a pinned CLI: in agents/, or its mirror where agent uids reach it. */
const PINNED = (cli: string, version: string) =>
	new RegExp(
		`^✓ ${cli} agent CLI: (${literal(PINNED_CLIS)}|${literal(SHARED_DIR)}/agents/\\S+/node_modules/\\.bin)/${cli} \\(${literal(version)}(, as uid \\d+)?\\)$`,
	);

let w: StackWorld;
let silent: Server;
const sockets = new Set<Socket>();

beforeAll(async () => {
	w = await createStackWorld();
	// Accepts connections and never answers: what a network check must give up on.
	silent = createServer((s) => {
		sockets.add(s);
	});
	await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
});
afterAll(async () => {
	for (const s of sockets) s.destroy();
	await new Promise((resolve) => silent.close(resolve));
	await w.stop();
});

async function config(name: string, yaml: string): Promise<string> {
	const file = path.join(w.dir, name);
	await writeFile(file, yaml);
	return file;
}

const repo = () =>
	`repos:\n  - name: api\n    url: ${w.repo.url}\n    slug: acme/api\n  - name: local\n    url: ${w.repo.url}\n`;

describe("lisa doctor", () => {
	it("passes on a working setup and says what it checked", async () => {
		const { code, stdout } = await lisa(["doctor", "--url", w.url()], w.env);
		expect(stdout.trim().split("\n")).toEqual([
			`✓ config ${w.env.LISA_CONFIG}: source linear, 1 repo(s), models claude`,
			expect.stringMatching(/^✓ git version \d/),
			expect.stringMatching(
				new RegExp(
					`^✓ claude agent CLI: ${literal(w.agents.bin)}/claude \\(claude 0\\.0\\.0-fake${ROOT ? ", as uid \\d+" : ""}\\)$`,
				),
			),
			"✓ claude credentials: ANTHROPIC_API_KEY",
			`✓ Linear (${w.linear.url}): signed in as Lisa`,
			`✓ GitHub (${w.github.url}): signed in as lisa-bot`,
			"✓ repo api (acme/api): visible, can push",
			`✓ Lisa at ${w.url()}: /healthz answers 200`,
			"",
			"all checks passed",
		]);
		expect(code).toBe(0);
		// As root the CLI ran as an agent uid of the pool, as the stack's tasks run it.
		const [probe] = await w.agents.versions();
		if (ROOT) expect(probe?.uid).toBe(Number(stdout.match(/as uid (\d+)\)/)?.[1]));
		if (ROOT) expect(probe?.uid).toBeGreaterThanOrEqual(61000);
	});

	it("checks Trello and GitHub Issues as the tracker when the config says so", async () => {
		const trello = await config(
			"trello.yaml",
			`source: trello\nsource_config: {team: ${TRELLO_BOARD}}\n${repo()}`,
		);
		const t = await lisa(["doctor"], { ...w.env, LISA_CONFIG: trello });
		expect(t.code).toBe(0);
		expect(t.stdout).toMatch(new RegExp(`\\n✓ Trello \\(${w.trello.url}\\): signed in as \\S+\\n`));
		expect(t.stdout).toContain("- repo local: no slug (not on GitHub): no pull requests");

		const github = await config("github.yaml", `source: github\n${repo()}`);
		const g = await lisa(["doctor"], { ...w.env, LISA_CONFIG: github });
		expect(g.code).toBe(0);
		expect(g.stdout).toContain(`✓ GitHub Issues (${w.github.url}): signed in as lisa-bot`);
		expect(g.stdout).not.toContain("✓ GitHub (");
	});

	it("fails with a fix for each problem", async () => {
		const file = await config(
			"broken.yaml",
			`models: [claude, builtin, codex]\nrepos:\n  - name: api\n    url: ${w.repo.url}\n    slug: acme/missing\n`,
		);
		const closed = `http://127.0.0.1:${await closedPort()}`;
		const env = {
			...w.env,
			LISA_CONFIG: file,
			LINEAR_API_KEY: "lin_api_wrong_key_0000000000000000",
			PATH: `${w.agents.bin.replace(/bin$/, "nothing")}:${path.dirname(process.execPath)}:/usr/bin:/bin`,
		};
		const { code, stdout } = await lisa(["doctor", "--url", closed], env);
		expect(code).toBe(1);
		const out = stdout.split("\n");
		const fixFor = (line: string) => out[out.indexOf(line) + 1];
		// Not on PATH, but pinned in agents/: what `npm start` runs (mirrored where agent uids reach it).
		expect(out).toContainEqual(expect.stringMatching(PINNED("claude", "2.1.330 (Claude Code)")));
		expect(out).toContain("✗ builtin agent: LISA_LLM_BASE_URL and LISA_LLM_MODEL not set");
		expect(out).toContain(`✗ Linear (${w.linear.url}) refused LINEAR_API_KEY`);
		expect(fixFor(`✗ Linear (${w.linear.url}) refused LINEAR_API_KEY`)).toMatch(
			/^ {4}fix: create a new personal API key in Linear › Settings › API/,
		);
		expect(out).toContain("✗ repo api (acme/missing): not found, or not visible to GITHUB_TOKEN");
		expect(out).toContain(`✗ no Lisa at ${closed} (ECONNREFUSED)`);
		expect(fixFor(`✗ no Lisa at ${closed} (ECONNREFUSED)`)).toBe(
			"    fix: start one with `npm start` or pass --url",
		);
		expect(out).toContainEqual(expect.stringMatching(PINNED("codex", "codex-cli 0.169.0")));
		// As root agents run as uids with an empty home: a model without its key in the environment
		// cannot work there (as the user, the agent may use the user's own CLI login).
		const codexKey =
			"codex has no credentials: none of OPENAI_API_KEY, CODEX_API_KEY is set, and agents run as their own uids with an empty home, so a CLI login cannot reach them";
		if (ROOT) {
			expect(out).toContain(`✗ ${codexKey}`);
			expect(fixFor(`✗ ${codexKey}`)).toBe(
				"    fix: export OPENAI_API_KEY (a key from platform.openai.com)",
			);
		} else expect(out).toContainEqual(expect.stringMatching(/^- codex credentials: none of/));
		expect(out.at(-2)).toBe(`${ROOT ? 5 : 4} problem(s) found`);
	});

	it("signs in as a GitHub App with its key, and says which variables to check when GitHub refuses it", async () => {
		const app = testApp(["acme/api"]);
		const github = await startGitHubDouble({
			repos: { "acme/api": w.repo.path },
			app: app.identity,
		});
		try {
			const env = { ...w.env, ...app.env, GITHUB_TOKEN: undefined, GITHUB_API_URL: github.url };
			const { stdout } = await lisa(["doctor"], env);
			expect(stdout).toContain(`✓ GitHub (${github.url}): signed in as the GitHub App lisa-test`);
			expect(stdout).toMatch(/✓ repo api \(acme\/api\): visible/);
			expect(stdout).toContain("✓ GitHub App: a step's token outlasts its 60 min limit");
			expect(stdout).not.toContain("GITHUB_TOKEN");

			const other = testApp(["acme/api"]).env.GITHUB_APP_PRIVATE_KEY;
			const refused = await lisa(["doctor"], { ...env, GITHUB_APP_PRIVATE_KEY: other });
			const out = refused.stdout.split("\n");
			const line = out.findIndex((l) =>
				l.startsWith(`✗ GitHub (${github.url}) refused the GitHub App (401)`),
			);
			expect(line, refused.stdout).toBeGreaterThanOrEqual(0);
			expect(out[line + 1]).toBe(
				"    fix: check GITHUB_APP_ID and GITHUB_APP_PRIVATE_KEY (the App's private key, PEM)",
			);
		} finally {
			await github.stop();
		}
	});

	it("says GitHub is not reachable when nothing answers, not a status nobody sent", async () => {
		const closed = `http://127.0.0.1:${await closedPort()}`;
		const { code, stdout } = await lisa(["doctor"], { ...w.env, GITHUB_API_URL: closed });
		expect(code).toBe(1);
		expect(stdout).toContain(`✗ GitHub (${closed}) is not reachable: connect ECONNREFUSED`);
		expect(stdout).toContain(
			"✗ repo api (acme/api): GitHub is not reachable: connect ECONNREFUSED",
		);
		expect(stdout).not.toContain("answered 500");
	});

	it("gives up on a tracker that does not answer, saying so", async () => {
		const silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/graphql`;
		const { code, stdout } = await lisa(["doctor"], { ...w.env, LINEAR_API_URL: silentUrl });
		expect(code).toBe(1);
		expect(stdout).toContain(`✗ Linear did not answer within 5 s (${silentUrl})`);
		expect(stdout).toContain("✓ repo api (acme/api): visible, can push");
	});

	it("reports an invalid config with the schema's words and skips what needs it", async () => {
		const file = await config("invalid.yaml", "provider: gpt\nrepos: []\n");
		const { code, stdout } = await lisa(["doctor"], { ...w.env, LISA_CONFIG: file });
		expect(code).toBe(1);
		expect(stdout).toContain(`✗ invalid config ${file}:`);
		expect(stdout).toMatch(/ {2}- provider: .* — fix: use one of claude, gemini/);
		expect(stdout).toContain("- agent CLIs: needs a valid config");
		expect(stdout).toContain("- tracker: needs a valid config");
	});

	it("fails on a misspelled key, naming the one meant", async () => {
		const file = await config(
			"typo.yaml",
			"repos: [{name: api, url: https://github.com/acme/api.git, valdiate: [npm test]}]\n",
		);
		const { code, stdout } = await lisa(["doctor"], { ...w.env, LISA_CONFIG: file });
		expect(code).toBe(1);
		expect(stdout).toContain("  - repos.0.valdiate: unknown key — fix: did you mean `validate`?");
		expect(stdout).not.toContain("fix the fields named above");
	});
});
