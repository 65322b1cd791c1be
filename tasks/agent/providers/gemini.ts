import { CliProvider, modelArgs, plainReader } from "./cli";

export const gemini = new CliProvider({
	name: "gemini",
	bin: "gemini",
	argv: (prompt, opts) => ["--yolo", ...modelArgs(opts, "-m"), "-p", prompt],
	reader: plainReader,
});
