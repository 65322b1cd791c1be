// npm run check:agents [-- <cli>…] [--tag <dist-tag>]: the agent CLI tests against the newest
// releases on the npm registry instead of the pins in agents/package.json — what a maintainer runs
// before bumping a pin. Installs them into a temporary directory, checks each accepts Lisa's flags,
// runs its provider test against it, prints CLI × version × verdict and writes the table as JSON
// to test/artifacts/check-agents.json.
import { execFile } from "node:child_process";
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs, promisify } from "node:util";
import { CLI_SPECS } from "../src/task/agents/providers";
import { cliFlagCheck } from "../src/task/agents/providers/flags";

const exec = promisify(execFile);
const root = fileURLToPath(new URL("..", import.meta.url));

const PACKAGES: Record<string, string> = {
	claude: "@anthropic-ai/claude-code",
	codex: "@openai/codex",
	gemini: "@google/gemini-cli",
	opencode: "opencode-ai",
};

interface Verdict {
	cli: string;
	pinned: string;
	tested: string;
	flags: string;
	tests: string;
	verdict: "ok" | "FAIL";
}

async function main(): Promise<number> {
	const { values, positionals } = parseArgs({
		allowPositionals: true,
		options: { tag: { type: "string", default: "latest" } },
	});
	const clis = positionals.length ? positionals : Object.keys(PACKAGES);
	const unknown = clis.filter((c) => !PACKAGES[c]);
	if (unknown.length) {
		console.error(
			`unknown CLI: ${unknown.join(", ")} (one of ${Object.keys(PACKAGES).join(", ")})`,
		);
		return 2;
	}
	const pins = JSON.parse(await readFile(path.join(root, "agents", "package.json"), "utf8"))
		.dependencies as Record<string, string>;
	const dir = await mkdtemp(path.join(os.tmpdir(), "lisa-check-agents-"));
	// Readable by all: as root the tests also run each CLI as an agent uid.
	await chmod(dir, 0o755);
	try {
		await writeFile(path.join(dir, "package.json"), '{"private":true}\n');
		const specs = clis.map((c) => `${PACKAGES[c]}@${values.tag}`);
		console.log(`installing ${specs.join(" ")} …`);
		await exec("npm", ["install", "--no-audit", "--no-fund", "--prefix", dir, ...specs], {
			maxBuffer: 16 * 1024 * 1024,
		});
		const bin = path.join(dir, "node_modules", ".bin");
		const env = { ...process.env, PATH: `${bin}:${process.env.PATH}` };
		const rows: Verdict[] = [];
		for (const cli of clis) {
			const spec = CLI_SPECS.find((s) => s.name === cli);
			if (!spec) continue;
			const flags = await cliFlagCheck(spec, env);
			const tests = await providerTests(cli, bin);
			const flagText =
				flags.error ?? (flags.missing.length ? `drops ${flags.missing.join(" ")}` : "ok");
			rows.push({
				cli,
				pinned: pins[PACKAGES[cli] as string] ?? "?",
				tested: flags.version,
				flags: flagText,
				tests,
				verdict: flagText === "ok" && tests.startsWith("ok") ? "ok" : "FAIL",
			});
		}
		printTable(rows);
		await mkdir(path.join(root, "test", "artifacts"), { recursive: true });
		await writeFile(
			path.join(root, "test", "artifacts", "check-agents.json"),
			`${JSON.stringify({ tag: values.tag, at: new Date().toISOString(), rows }, null, 2)}\n`,
		);
		return rows.every((r) => r.verdict === "ok") ? 0 : 1;
	} finally {
		await rm(dir, { recursive: true, force: true });
	}
}

/** Runs the CLI's provider test against the installed CLI: "ok (n tests)" or what failed. */
async function providerTests(cli: string, bin: string): Promise<string> {
	const report = path.join(os.tmpdir(), `lisa-check-${cli}-${process.pid}.json`);
	const file = `src/task/agents/providers/${cli}.test.ts`;
	await exec("npx", ["vitest", "run", file, "--reporter=json", `--outputFile=${report}`], {
		cwd: root,
		env: { ...process.env, LISA_AGENT_CLI_BIN: bin },
		maxBuffer: 64 * 1024 * 1024,
	}).catch(() => undefined);
	try {
		const r = JSON.parse(await readFile(report, "utf8")) as {
			numPassedTests: number;
			numFailedTests: number;
			testResults: { assertionResults: { status: string; title: string }[] }[];
		};
		if (r.numFailedTests === 0 && r.numPassedTests > 0) return `ok (${r.numPassedTests} tests)`;
		const failed = r.testResults
			.flatMap((t) => t.assertionResults)
			.filter((a) => a.status === "failed")
			.map((a) => a.title);
		return `${r.numFailedTests} failed: ${failed.join("; ")}`;
	} catch {
		return `${file} did not run`;
	} finally {
		await rm(report, { force: true });
	}
}

function printTable(rows: Verdict[]): void {
	const head: Verdict = {
		cli: "CLI",
		pinned: "pinned",
		tested: "tested",
		flags: "flags",
		tests: "tests",
		verdict: "verdict" as "ok",
	};
	const cols = Object.keys(head) as (keyof Verdict)[];
	const width = (c: keyof Verdict) => Math.max(...[head, ...rows].map((r) => r[c].length));
	for (const r of [head, ...rows]) console.log(cols.map((c) => r[c].padEnd(width(c))).join("  "));
}

process.exitCode = await main();
