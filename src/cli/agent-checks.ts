import { type ExecFileException, execFile } from "node:child_process";
import { accessSync, constants, existsSync } from "node:fs";
import { chown, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { type LisaConfig, type ModelSpec, parseModelSpec } from "../config/schema";
import { closedFolder } from "../local/agent-reach";
import { AgentUidPool, type UidRange } from "../local/agent-users";
import type { Check } from "./doctor";

// The agents the config's `models` needs, checked as the stack runs them (`npm start` and `lisa
// doctor`): each CLI is run (`--version`) with the tasks' PATH, as an agent uid when the stack runs
// as root, and each model's credentials must be in the environment when agents run as other uids
// (their home is empty: a CLI login in yours does not reach them).

/** How the agents run: their PATH (agent-reach.ts) and uid (none: this process's user). */
export interface AgentProbe {
	path: string;
	uid?: number;
}

const TIMEOUT_MS = 30_000;

const INSTALL: Record<string, string> = {
	claude: "npm i -g @anthropic-ai/claude-code",
	gemini: "npm i -g @google/gemini-cli",
	opencode: "npm i -g opencode-ai",
	codex: "npm i -g @openai/codex",
};

/**
 * The file `bin` on PATH that the agent runs: the first one it can execute, else the first one
 * there is (with the folder that closes it to other users).
 */
function resolve(bin: string, probe: AgentProbe): { file?: string; closed?: string } {
	let blocked: { file: string; closed?: string } | undefined;
	for (const dir of probe.path.split(path.delimiter).filter(Boolean)) {
		const file = path.join(dir, bin);
		if (!existsSync(file)) continue;
		if (probe.uid === undefined) {
			try {
				accessSync(file, constants.X_OK);
				return { file };
			} catch {
				blocked ??= { file };
				continue;
			}
		}
		const closed = closedFolder(file);
		if (!closed) return { file };
		blocked ??= { file, closed };
	}
	return blocked ?? {};
}

interface Ran {
	error?: ExecFileException;
	stdout: string;
	stderr: string;
}

async function version(bin: string, probe: AgentProbe): Promise<Ran> {
	const home = await mkdtemp(path.join(os.tmpdir(), "lisa-probe-"));
	try {
		if (probe.uid !== undefined) await chown(home, probe.uid, probe.uid);
		return await new Promise<Ran>((done) =>
			execFile(
				bin,
				["--version"],
				{
					cwd: home,
					env: { PATH: probe.path, HOME: home },
					timeout: TIMEOUT_MS,
					...(probe.uid === undefined ? {} : { uid: probe.uid, gid: probe.uid }),
				},
				(error, stdout, stderr) => done({ error: error ?? undefined, stdout, stderr }),
			),
		);
	} finally {
		await rm(home, { recursive: true, force: true });
	}
}

const lastLine = (text: string) => text.trim().split("\n").at(-1)?.trim().slice(0, 80) ?? "";

async function cliCheck(bin: string, models: string[], probe: AgentProbe): Promise<Check> {
	const as = probe.uid === undefined ? "" : ` as uid ${probe.uid}`;
	const r = await version(bin, probe);
	const { file, closed } = resolve(bin, probe);
	if (!r.error)
		return {
			ok: true,
			label: `${bin} agent CLI: ${file ?? bin} (${lastLine(r.stdout)}${as && `,${as}`})`,
		};
	if (r.error.code === "ENOENT")
		return {
			ok: false,
			label: `${bin} agent CLI is not on PATH or in agents/ (models: ${models.join(", ")})`,
			hint: `${INSTALL[bin] ?? `install ${bin}`}, or remove it from \`models\``,
		};
	if (r.error.code === "EACCES")
		return {
			ok: false,
			label: `${bin} agent CLI: ${file ?? bin} cannot be run${as} (EACCES${closed ? `: ${closed} is closed to other users` : ""})`,
			hint: `install ${bin} where any user can run it (${INSTALL[bin] ?? "into /usr/local"}), or take its folder off PATH so the one in agents/ is used`,
		};
	const how = r.error.killed
		? `did not answer within ${TIMEOUT_MS / 1000} s`
		: `failed (${r.error.code ?? r.error.signal})`;
	return {
		ok: false,
		label: `${bin} agent CLI: \`${file ?? bin} --version\`${as} ${how}: ${lastLine(r.stderr || r.stdout)}`,
		hint: `run \`${bin} --version\` yourself to see why, or remove ${bin} from \`models\``,
	};
}

/** One model's credentials: the variables any of which will do, and where to get one. */
function credentialsOf(spec: ModelSpec): { vars: string[]; hint: string } | undefined {
	if (spec.provider === "claude")
		return {
			vars: [
				"ANTHROPIC_API_KEY",
				"ANTHROPIC_AUTH_TOKEN",
				"CLAUDE_CODE_OAUTH_TOKEN",
				"CLAUDE_CODE_USE_BEDROCK",
				"CLAUDE_CODE_USE_VERTEX",
			],
			hint: "export ANTHROPIC_API_KEY (a key from console.anthropic.com), or CLAUDE_CODE_OAUTH_TOKEN from `claude setup-token`",
		};
	if (spec.provider === "gemini")
		return {
			vars: [
				"GEMINI_API_KEY",
				"GOOGLE_API_KEY",
				"GOOGLE_GENAI_USE_VERTEXAI",
				"GOOGLE_APPLICATION_CREDENTIALS",
			],
			hint: "export GEMINI_API_KEY (a key from aistudio.google.com)",
		};
	if (spec.provider === "codex")
		return {
			vars: ["OPENAI_API_KEY", "CODEX_API_KEY"],
			hint: "export OPENAI_API_KEY (a key from platform.openai.com)",
		};
	if (spec.provider !== "opencode") return undefined;
	const byPrefix: Record<string, string> = {
		anthropic: "ANTHROPIC_API_KEY",
		openai: "OPENAI_API_KEY",
		openrouter: "OPENROUTER_API_KEY",
		lisa: "OPENCODE_LISA_BASE_URL",
	};
	const prefix = spec.model?.split("/")[0];
	if (prefix && !byPrefix[prefix]) return undefined;
	const vars = prefix ? [byPrefix[prefix] as string] : Object.values(byPrefix);
	return { vars, hint: `export ${vars.join(" or ")}` };
}

/**
 * The model credentials each CLI of `models` needs, from the environment. Agents of other uids get
 * an empty home: a CLI login cannot reach them. Agents running as this user can use its login.
 */
export function credentialChecks(
	config: LisaConfig,
	env: NodeJS.ProcessEnv,
	otherUids: boolean,
): Check[] {
	const checks = new Map<string, Check>();
	for (const spec of config.models.map(parseModelSpec)) {
		const needs = credentialsOf(spec);
		if (!needs || checks.has(spec.spec)) continue;
		const set = needs.vars.find((v) => env[v]?.trim());
		checks.set(
			spec.spec,
			set
				? { ok: true, label: `${spec.spec} credentials: ${set}` }
				: otherUids
					? {
							ok: false,
							label: `${spec.spec} has no credentials: none of ${needs.vars.join(", ")} is set, and agents run as their own uids with an empty home, so a CLI login cannot reach them`,
							hint: needs.hint,
						}
					: {
							ok: "skip",
							label: `${spec.spec} credentials: none of ${needs.vars.join(", ")} is set: the agent relies on your own ${spec.provider} login`,
						},
		);
	}
	return [...checks.values()];
}

function builtinCheck(specs: ModelSpec[], env: NodeJS.ProcessEnv): Check {
	const needsModel = specs.some((s) => s.provider === "builtin" && !s.model);
	const missing = ["LISA_LLM_BASE_URL", ...(needsModel ? ["LISA_LLM_MODEL"] : [])].filter(
		(v) => !env[v]?.trim(),
	);
	return missing.length
		? {
				ok: false,
				label: `builtin agent: ${missing.join(" and ")} not set`,
				hint: "set LISA_LLM_BASE_URL (an OpenAI-compatible endpoint) and LISA_LLM_MODEL (and LISA_LLM_API_KEY if it needs one)",
			}
		: { ok: true, label: `builtin agent: ${env.LISA_LLM_BASE_URL}` };
}

/** One check per provider the `models` chain names, then the models' credentials. */
export async function agentChecks(
	config: LisaConfig,
	env: NodeJS.ProcessEnv,
	probe: AgentProbe,
): Promise<Check[]> {
	const specs = config.models.map(parseModelSpec);
	const providers = [...new Set(specs.map((s) => s.provider))];
	const clis = await Promise.all(
		providers.map((p) =>
			p === "builtin" ? builtinCheck(specs, env) : cliCheck(p, config.models, probe),
		),
	);
	return [...clis, ...credentialChecks(config, env, probe.uid !== undefined)];
}

/**
 * `agentChecks` for the container launcher: the CLIs are the task image's (its AGENT_CLIS), not
 * this machine's, and its agents run as uids of their own with an empty home.
 */
export function imageAgentChecks(
	config: LisaConfig,
	env: NodeJS.ProcessEnv,
	image: { name: string; clis: readonly string[] },
): Check[] {
	const specs = config.models.map(parseModelSpec);
	const providers = [...new Set(specs.map((s) => s.provider))];
	const needed = providers.filter((p) => p !== "builtin");
	const clis = providers.map(
		(p): Check =>
			p === "builtin"
				? builtinCheck(specs, env)
				: image.clis.includes(p)
					? { ok: true, label: `${p}: in the task image ${image.name}` }
					: {
							ok: false,
							label: `${p} is not in the task image ${image.name} (it has ${image.clis.join(", ") || "no agent CLI"})`,
							hint: `npm run image -- --clis "${needed.join(" ")}"`,
						},
	);
	return [...clis, ...credentialChecks(config, env, true)];
}

/**
 * `agentChecks` as the stack's agents run: with a uid of the pool when there is one (none: this
 * process's user). A pool with no uid free is a failed check, not a crash.
 */
export async function agentChecksAs(
	range: UidRange | undefined,
	config: LisaConfig,
	env: NodeJS.ProcessEnv,
	agentPath: string,
): Promise<Check[]> {
	if (!range) return agentChecks(config, env, { path: agentPath });
	const pool = new AgentUidPool(range);
	let uid: number;
	try {
		uid = await pool.take();
	} catch (err) {
		return [{ ok: false, label: `the agent CLIs were not checked: ${(err as Error).message}` }];
	}
	try {
		return await agentChecks(config, env, { path: agentPath, uid });
	} finally {
		await pool.give(uid);
	}
}
