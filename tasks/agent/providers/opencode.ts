import { CliProvider, modelArgs, plainReader } from "./cli";

export const opencode = new CliProvider({
	name: "opencode",
	bin: "opencode",
	argv: (prompt, opts) => ["run", ...modelArgs(opts, "-m"), prompt],
	reader: plainReader,
});
