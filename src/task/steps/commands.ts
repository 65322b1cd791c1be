import { tail } from "../../domain/redact";
import type { AgentUser } from "../sandbox/process";
import { runProcess } from "../sandbox/process";

// The repo's `setup` and `validate` commands: strings from the team's config (never from the issue),
// each run by `bash -c` in the worktree with the plain command environment, no credentials, as the
// agent's user (they run what the agent wrote).

export interface CommandFailure {
	command: string;
	exitCode: number | null;
	timedOut: boolean;
	/** The last part of its output. */
	output: string;
}

const OUTPUT_TAIL = 4_000;

/** Runs the commands in order; the first failure, or undefined when all pass. */
export async function runCommands(
	commands: readonly string[],
	opts: {
		cwd: string;
		env: NodeJS.ProcessEnv;
		deadlineAt: number;
		onOutput?: (chunk: string) => void;
		/**
		 * Setup may start services the validate commands use: they stay until the attempt stops
		 * the agent's processes.
		 */
		keepBackground?: boolean;
		user?: AgentUser;
		/** Aborting kills the running command. */
		signal?: AbortSignal;
	},
): Promise<CommandFailure | undefined> {
	for (const command of commands) {
		const timeoutMs = Math.max(1000, opts.deadlineAt - Date.now());
		const r = await runProcess("bash", ["-c", command], {
			cwd: opts.cwd,
			env: { ...opts.env, CI: "true" },
			timeoutMs,
			onOutput: opts.onOutput,
			keepBackground: opts.keepBackground,
			user: opts.user,
			signal: opts.signal,
		});
		if (r.code !== 0 || r.timedOut)
			return {
				command,
				exitCode: r.code,
				timedOut: r.timedOut,
				output: tail(`${r.error ? `${r.error}\n` : ""}${r.output}`, OUTPUT_TAIL),
			};
	}
	return undefined;
}

export function describeFailure(kind: "setup" | "validate", f: CommandFailure): string {
	const how = f.timedOut
		? "ran out of time"
		: f.exitCode === null
			? "was killed"
			: `failed with exit code ${f.exitCode}`;
	return `the ${kind} command \`${f.command}\` ${how}`;
}
