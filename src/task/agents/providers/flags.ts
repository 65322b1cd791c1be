import { runProcess } from "../../sandbox/process";
import type { CliSpec } from "./cli-provider";

/**
 * Every flag Lisa passes a CLI: those of its argv with a model and a native worktree given.
 */
export function flagsOf(spec: CliSpec): string[] {
	const argv = spec.argv({
		cwd: "/",
		env: {},
		timeoutMs: 0,
		scratchDir: "/",
		model: "MODEL",
		nativeWorktree: spec.nativeWorktree ? "NAME" : undefined,
	});
	return [...new Set(argv.filter((a) => /^--?\w/.test(a)).map((a) => a.split("=")[0] as string))];
}

export interface FlagCheck {
	cli: string;
	version: string;
	/** Flags Lisa passes that the CLI's help no longer lists. */
	missing: string[];
	error?: string;
}

const literal = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * Whether the installed CLI still lists every flag Lisa passes it
 * (docs/agent-task.md › Providers and models): what the image checks after installing the CLIs, so
 * a version that dropped one fails the build.
 */
export async function cliFlagCheck(spec: CliSpec, env: NodeJS.ProcessEnv): Promise<FlagCheck> {
	const run = (args: string[]) =>
		runProcess(spec.bin, args, { cwd: process.cwd(), env, timeoutMs: 60_000 });
	const version = await run(["--version"]);
	const help = await run(spec.help);
	const text = `${help.stdout}\n${help.output}`;
	const check: FlagCheck = {
		cli: spec.name,
		version: version.stdout.trim().split("\n")[0] ?? "",
		missing: [],
	};
	if (version.code !== 0 || help.code !== 0) {
		check.error = `${spec.bin} ${version.code !== 0 ? "--version" : spec.help.join(" ")} failed: ${(help.error ?? help.output).trim().slice(0, 300)}`;
		return check;
	}
	// A flag counts when the help shows it as an option, not merely as a word in prose.
	check.missing = flagsOf(spec).filter(
		(f) => !new RegExp(`(^|[\\s,\\[|])${literal(f)}(?![\\w-])`, "m").test(text),
	);
	return check;
}

/** Checks every installed CLI and prints a line each; false when any flag is missing. */
export async function checkInstalledClis(
	specs: readonly CliSpec[],
	env: NodeJS.ProcessEnv,
	print: (line: string) => void,
): Promise<boolean> {
	let ok = true;
	for (const spec of specs) {
		const c = await cliFlagCheck(spec, env);
		const fine = !c.error && c.missing.length === 0;
		ok &&= fine;
		print(
			`${fine ? "ok  " : "FAIL"} ${c.cli} ${c.version}${c.error ? `: ${c.error}` : ""}${c.missing.length ? `: no longer accepts ${c.missing.join(", ")}` : ""}`,
		);
	}
	return ok;
}
