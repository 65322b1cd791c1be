// Runs a real agent CLI through Lisa's provider code, in a throwaway repository on Lisa's branch:
// the argv, the environment allow-list, the cwd, the agent's own user and Lisa's reading of the
// output are the production ones. Only the model is a scripted local server.
import { chmod, mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import type { ProviderName } from "../../src/config/schema";
import type { TokenUsage } from "../../src/domain/usage";
import { reachableClis } from "../../src/local/agent-reach";
import { AgentUidPool, agentUidRange, type UidRange } from "../../src/local/agent-users";
import { type AgentResult, type AgentRunOptions, agentEnv } from "../../src/task/agents/provider";
import { PROVIDERS } from "../../src/task/agents/providers";
import { Broker, type Refusal } from "../../src/task/broker/broker";
import { brokerPlan } from "../../src/task/broker/keys";
import { modelAllowed } from "../../src/task/broker/models";
import { MANIFEST_FILE } from "../../src/task/prompts/prompt";
import { handOver, prepareHome } from "../../src/task/sandbox/identity";
import type { AgentUser } from "../../src/task/sandbox/process";
import { git } from "./git";

/**
 * Where the agent CLIs are: the pinned ones `npm install` put in `agents/` (the versions the image
 * uses), or those `npm run check:agents` installed (LISA_AGENT_CLI_BIN).
 */
export const AGENT_CLI_BIN =
	process.env.LISA_AGENT_CLI_BIN ??
	fileURLToPath(new URL("../../agents/node_modules/.bin", import.meta.url));

/** PATH with the pinned CLIs first. */
export const AGENT_CLI_PATH = `${AGENT_CLI_BIN}:${process.env.PATH}`;

/**
 * PATH with the pinned CLIs first, where agent uids can run them: a checkout in a folder closed to
 * other users (root's home, `mktemp -d`) has them mirrored, as `npm start` does (agent-reach.ts).
 */
export async function agentUidCliPath(): Promise<string> {
	return `${(await reachableClis(AGENT_CLI_BIN)).dir}:${process.env.PATH}`;
}

const LISA_BRANCH = "lisa/eng-7-add-greeting";

/** Whether the tests run as root, which running the CLI as the agent's own user needs. */
export const AS_ROOT = process.getuid?.() === 0;

/** The manifest a scripted model writes for the issue, and its last answer. */
export const TEST_MANIFEST = {
	branch: LISA_BRANCH,
	commitMessage: "feat: add greeting",
	prTitle: "Add greeting",
	prBody: "- **What**: adds greeting.txt",
};
export const TEST_FINAL = "Added greeting.txt, committed it and wrote the manifest.";

/** The CLIs that talk to a model API of their own (not the built-in agent). */
export type AgentCli = Exclude<ProviderName, "builtin">;

/** A model double (or any endpoint) as a CLI reaches it. */
export interface ModelEndpoint {
	url: string;
	apiKey: string;
}

/** The variables that point each CLI at a model API: its base URL and key. */
export const modelEnv = (name: AgentCli, model: ModelEndpoint): NodeJS.ProcessEnv =>
	({
		claude: { ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: model.apiKey },
		codex: { OPENAI_BASE_URL: model.url, OPENAI_API_KEY: model.apiKey },
		gemini: { GOOGLE_GEMINI_BASE_URL: model.url, GEMINI_API_KEY: model.apiKey },
		opencode: { OPENCODE_LISA_BASE_URL: model.url, OPENCODE_LISA_API_KEY: model.apiKey },
	})[name];

/** The environment a provider gets in a test: the pinned CLIs first on PATH, `vars` allow-listed. */
export const cliEnv = (
	name: ProviderName,
	home: string,
	vars: NodeJS.ProcessEnv = {},
	PATH = AGENT_CLI_PATH,
) => agentEnv(name, { PATH, HOME: home, ...vars });

/** What a sandboxed run takes besides the provider's options. */
interface CliRunOptions extends Partial<AgentRunOptions> {
	/**
	 * A proxy (`startTrapProxy`) for every request off loopback. Set past the allow-list, which drops
	 * proxy variables: in production the CLI never gets them.
	 */
	proxy?: string;
}

const proxyEnv = (url: string): NodeJS.ProcessEnv => ({
	HTTPS_PROXY: url,
	HTTP_PROXY: url,
	ALL_PROXY: url,
	https_proxy: url,
	http_proxy: url,
	all_proxy: url,
	NO_PROXY: "127.0.0.1,localhost",
	no_proxy: "127.0.0.1,localhost",
});

interface TrapProxy {
	url: string;
	/** Every request that reached it (`METHOD target`), or what it could not read as one. */
	seen: string[];
	stop(): Promise<void>;
}

/**
 * A proxy that refuses everything and remembers where the CLI tried to go: given as the CLI's proxy,
 * it shows any request that would have left the machine (telemetry, updates, feature flags).
 */
async function startTrapProxy(): Promise<TrapProxy> {
	const seen: string[] = [];
	const server = http.createServer((req, res) => {
		seen.push(`${req.method} ${req.url}`);
		res.writeHead(403).end();
	});
	server.on("connect", (req, socket) => {
		seen.push(`CONNECT ${req.url}`);
		socket.end("HTTP/1.1 403 Forbidden\r\n\r\n");
	});
	server.on("clientError", (err, socket) => {
		seen.push(`unreadable: ${err.message}`);
		socket.destroy();
	});
	await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
	return {
		url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
		seen,
		stop: () =>
			new Promise((resolve) => {
				server.close(() => resolve());
				server.closeAllConnections();
			}),
	};
}

export interface CliSandbox {
	/** The repository, checked out on Lisa's branch with one commit on `main`. */
	repo: string;
	scratch: string;
	home: string;
	user?: AgentUser;
	/** Runs the provider as the task does, with the variables given (a base URL, a key). */
	run(
		name: ProviderName,
		prompt: string,
		vars: NodeJS.ProcessEnv,
		opts?: CliRunOptions,
	): Promise<AgentResult & { shown: string }>;
	/** Subjects of the commits on Lisa's branch since `main`, newest first. */
	commits(): Promise<string[]>;
	/** The manifest the agent wrote in the repository root, parsed. */
	manifest(dir?: string): Promise<unknown>;
	cleanup(): Promise<void>;
}

/**
 * A sandbox for one CLI run. With `asAgentUser` (the task as root) the CLI runs as a uid of the
 * local pool, with a fresh home, as `npm start` runs it; otherwise as the test's own user.
 */
async function cliSandbox(opts: { asAgentUser?: boolean } = {}): Promise<CliSandbox> {
	const dir = await mkdtemp(path.join(os.tmpdir(), "lisa-cli-"));
	await chmod(dir, 0o711);
	const repo = path.join(dir, "repo");
	const scratch = path.join(dir, "scratch");
	const home = path.join(dir, "home");
	await mkdir(repo);
	await mkdir(scratch, { mode: 0o700 });
	await git(repo, "init", "--initial-branch", "main");
	await git(repo, "commit", "--allow-empty", "-m", "chore: initial commit");
	await git(repo, "checkout", "-b", LISA_BRANCH);

	let user: AgentUser | undefined;
	let pool: AgentUidPool | undefined;
	let PATH = AGENT_CLI_PATH;
	if (opts.asAgentUser) {
		PATH = await agentUidCliPath();
		pool = new AgentUidPool(agentUidRange(undefined, true) as UidRange);
		const uid = await pool.take();
		user = { uid, gid: uid, home };
		await prepareHome(user, home);
		await handOver([repo, scratch], user);
	} else await mkdir(home, { mode: 0o700 });

	return {
		repo,
		scratch,
		home,
		user,
		async run(name, prompt, vars, { proxy, ...more } = {}) {
			let shown = "";
			const result = await PROVIDERS[name].run(prompt, {
				cwd: repo,
				env: { ...cliEnv(name, home, vars, PATH), ...(proxy ? proxyEnv(proxy) : {}) },
				timeoutMs: 120_000,
				scratchDir: scratch,
				user,
				onOutput: (chunk) => {
					shown += chunk;
				},
				...more,
			});
			return { ...result, shown };
		},
		async commits() {
			// As root, git refuses a repository another user (the agent) owns unless told it is safe.
			const log = await git(
				repo,
				"-c",
				`safe.directory=${repo}`,
				"log",
				"--format=%s",
				`main..${LISA_BRANCH}`,
			);
			return log.split("\n").filter(Boolean);
		},
		async manifest(at = repo) {
			return JSON.parse(await readFile(path.join(at, MANIFEST_FILE), "utf8"));
		},
		async cleanup() {
			if (user) await pool?.give(user.uid);
			await rm(dir, { recursive: true, force: true });
		},
	};
}

/** What one test of a CLI runs it in and against. */
export interface CliTest<M> {
	sandbox: CliSandbox;
	model: M;
	/** Given as the CLI's proxy, it shows any request that would have left the machine. */
	trap: TrapProxy;
	/** What the CLI is pointed at: the model double, or Lisa's model broker in front of it. */
	endpoint: ModelEndpoint;
}

/** A model double as the broker tests need it: an endpoint that tells what its answers reported. */
type ModelDouble = ModelEndpoint & { billed: TokenUsage; stop(): Promise<void> };

/** A run through Lisa's model broker: the CLI, and the model its `models` entry names. */
export interface ViaBroker {
	cli: AgentCli;
	model: string;
}

/**
 * One test's CLI run: a sandbox, a model double and a trap proxy, all gone after it. With `broker`,
 * the CLI reaches the double through a lease of Lisa's model broker (src/task/broker) and must
 * leave it nothing to refuse; the broker must count what the double billed.
 */
export async function withCli<M extends { stop(): Promise<void> }>(
	startModel: () => Promise<M>,
	opts: { asAgentUser?: boolean; broker?: ViaBroker },
	test: (t: CliTest<M>) => Promise<void>,
): Promise<void> {
	const sandbox = await cliSandbox(opts);
	try {
		const model = await startModel();
		try {
			const trap = await startTrapProxy();
			try {
				if (!opts.broker)
					return await test({ sandbox, model, trap, endpoint: model as unknown as ModelEndpoint });
				await viaBroker(model as unknown as ModelDouble, opts.broker, (endpoint) =>
					test({ sandbox, model, trap, endpoint }),
				);
			} finally {
				await trap.stop();
			}
		} finally {
			await model.stop();
		}
	} finally {
		await sandbox.cleanup();
	}
}

async function viaBroker(
	double: ModelDouble,
	{ cli, model }: ViaBroker,
	test: (endpoint: ModelEndpoint) => Promise<void>,
): Promise<void> {
	const broker = await Broker.start();
	try {
		const { routes } = brokerPlan(cli, modelEnv(cli, double));
		const refused: Refusal[] = [];
		const lease = broker.lease({
			upstreams: routes.map((r) => r.upstream),
			allows: (m) => modelAllowed(model, m),
			onRefused: (r) => refused.push(r),
		});
		await test({ url: lease.url(0), apiKey: lease.key });
		expect(refused).toEqual([]);
		expect(lease.usage().usage).toEqual(double.billed);
		expect(lease.usage().requests).toBeGreaterThan(0);
	} finally {
		await broker.close();
	}
}

/**
 * A successful run tested as the test's user, and (when the tests run as root) as the agent's own
 * user and through Lisa's model broker; `titles` name the first two.
 */
export function itImplements<M extends { stop(): Promise<void> }>(
	titles: [ownUser: string, agentUser: string],
	startModel: () => Promise<M>,
	check: (t: CliTest<M>) => Promise<void>,
	timeout?: number,
	broker?: ViaBroker,
) {
	it(titles[0], () => withCli(startModel, {}, check), timeout);
	it.runIf(AS_ROOT)(titles[1], () => withCli(startModel, { asAgentUser: true }, check), timeout);
	if (broker)
		it.runIf(AS_ROOT)(
			`${titles[1]}, through Lisa's model broker: the real key stays in the task, the broker counts what the model billed`,
			() => withCli(startModel, { asAgentUser: true, broker }, check),
			timeout,
		);
}

/**
 * What a CLI's run on the test issue leaves when it succeeds: exit 0 in time, Lisa's commit alone
 * on the branch, greeting.txt with `greeting`, and the manifest. `why` explains a bad exit.
 */
export async function expectImplemented(
	sandbox: CliSandbox,
	r: AgentResult,
	greeting: string,
	why = `${r.output}\n(exit code ${r.exitCode}, signal ${r.signal ?? "none"}, timed out: ${r.timedOut})`,
) {
	expect(r.exitCode, why).toBe(0);
	expect(r.ok).toBe(true);
	expect(r.timedOut).toBe(false);
	expect(await sandbox.commits()).toEqual([TEST_MANIFEST.commitMessage]);
	expect(await readFile(path.join(sandbox.repo, "greeting.txt"), "utf8")).toBe(greeting);
	expect(await sandbox.manifest()).toEqual(TEST_MANIFEST);
}
