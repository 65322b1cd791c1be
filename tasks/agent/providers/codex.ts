import { CliProvider, modelArgs, plainReader } from "./cli";

export const codex = new CliProvider({
	name: "codex",
	bin: "codex",
	argv: (prompt, opts) => ["exec", "--full-auto", ...modelArgs(opts, "-m"), prompt],
	reader: plainReader,
});
