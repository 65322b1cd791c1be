import path from "node:path";
import * as z from "zod";
import { readAgentFile } from "../sandbox/files";
import { MANIFEST_FILE } from "./prompt";

const manifestSchema = z.object({
	branch: z.string().min(1).optional(),
	prTitle: z.string().trim().min(1, "prTitle is empty").max(256),
	prBody: z.string().max(60_000),
});
export type Manifest = z.infer<typeof manifestSchema>;

const MAX_MANIFEST_BYTES = 1024 * 1024;

class ManifestError extends Error {
	constructor(message: string) {
		super(message);
		this.name = "ManifestError";
	}
}

export async function readManifest(dir: string): Promise<Manifest> {
	let text: string;
	try {
		text = await readAgentFile(path.join(dir, MANIFEST_FILE), MAX_MANIFEST_BYTES);
	} catch (err) {
		const { code } = err as NodeJS.ErrnoException;
		throw new ManifestError(
			code === "ENOENT"
				? `the agent did not write ${MANIFEST_FILE}`
				: `${MANIFEST_FILE} could not be read: ${code === "ELOOP" ? "it is a symbolic link" : code ? `error ${code}` : (err as Error).message}`,
		);
	}
	let raw: unknown;
	try {
		raw = JSON.parse(text);
	} catch {
		throw new ManifestError(`${MANIFEST_FILE} is not valid JSON`);
	}
	const parsed = manifestSchema.safeParse(raw);
	if (!parsed.success)
		throw new ManifestError(
			`${MANIFEST_FILE} is invalid: ${parsed.error.issues.map((i) => `${i.path.join(".") || "root"}: ${i.message}`).join("; ")}`,
		);
	return parsed.data;
}
