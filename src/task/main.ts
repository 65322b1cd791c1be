import os from "node:os";
import path from "node:path";
import { readSettings } from "../config/settings";
import { createLogger, secretValues } from "../log";
import { storeAndQueue } from "../runtime/aws";
import { CLI_SPECS } from "./agents/providers";
import { checkInstalledClis } from "./agents/providers/flags";
import { runStep } from "./attempt/step";
import { takeGithubToken } from "./context/token";
import { serveEgress } from "./egress/service";

// Entry point of the agent task (ECS container or local child process). Env contract:
// docs/agent-task.md › The agent task.

function required(name: string): string {
	const v = process.env[name];
	if (!v) throw new Error(`${name} is not set`);
	return v;
}

async function main(): Promise<void> {
	const githubToken = takeGithubToken(process.env);
	// One list of the secrets the task knows, for its log and everything it reports: the attempt adds
	// the ones it learns (a minted token, lease keys).
	const secrets = secretValues({ ...process.env, LISA_GITHUB_TOKEN: githubToken });
	const log = createLogger("lisa-agent", process.env, secrets);
	const runId = required("LISA_RUN_ID");
	const stepIndex = Number(required("LISA_STEP_INDEX"));
	const attempt = Number(required("LISA_ATTEMPT"));
	const workspace =
		process.env.LISA_WORKSPACE ?? path.join(os.tmpdir(), "lisa", runId, `step-${stepIndex}`);
	const report = await runStep(
		{
			...storeAndQueue(readSettings()),
			log,
			env: process.env,
			githubToken,
			secrets,
		},
		{ runId, stepIndex, attempt, workspace },
	);
	log.info(
		{ runId, stepIndex, attempt, outcome: report?.outcome, error: report?.error },
		"step finished",
	);
}

/**
 * `agent.mjs check-clis`: the image's build checks the CLIs it installed (LISA_AGENT_CLIS, the
 * build's AGENT_CLIS) accept Lisa's flags.
 */
async function checkClis(): Promise<void> {
	const installed = process.env.LISA_AGENT_CLIS?.split(/\s+/).filter(Boolean);
	const specs = installed ? CLI_SPECS.filter((s) => installed.includes(s.name)) : CLI_SPECS;
	const ok = await checkInstalledClis(specs, process.env, (line) => console.log(line));
	process.exit(ok ? 0 : 1);
}

// A container's PID 1 ignores SIGTERM and SIGINT unless it handles them: end as any other process
// does on them (the kernel then ends the container's other processes), so a stop takes no grace.
for (const signal of ["SIGTERM", "SIGINT"] as const)
	process.on(signal, () => process.exit(128 + os.constants.signals[signal]));

/** `agent.mjs egress-proxy`: the image as the egress proxy service (AWS, LISA_AGENT_EGRESS=allow-list). */
async function egressProxy(): Promise<void> {
	await serveEgress(process.env, createLogger("lisa-egress"));
}

const commands: Record<string, () => Promise<void>> = {
	"check-clis": checkClis,
	"egress-proxy": egressProxy,
};
(commands[process.argv[2] ?? ""] ?? main)().catch((err) => {
	createLogger("lisa-agent").error({ err }, "agent task crashed");
	process.exit(1);
});
