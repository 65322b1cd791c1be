import { CliProvider, modelArgs, plainReader } from "./cli";

// Claude Code's `--worktree` takes an optional name: it is always given, or the prompt would be
// taken for the name.
export const claude = new CliProvider({
	name: "claude",
	bin: "claude",
	argv: (prompt, opts) => [
		"-p",
		"--dangerously-skip-permissions",
		...modelArgs(opts, "--model"),
		...(opts.nativeWorktree ? ["--worktree", opts.nativeWorktree] : []),
		prompt,
	],
	reader: plainReader,
	nativeWorktree: true,
});
