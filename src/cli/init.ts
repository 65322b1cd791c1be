import { existsSync, readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseDocument } from "yaml";
import { SOURCES, type SourceName } from "../config/schema";
import { WRITE_OPTIONS } from "./config-path";
import { CliError } from "./exit";

// `lisa init`: the commented example config (.lisa/config.example.yaml, the one template) with the
// chosen tracker's defaults, written where LISA_CONFIG (or .lisa/config.yaml) says.

const EXAMPLE = fileURLToPath(new URL("../../.lisa/config.example.yaml", import.meta.url));

const SOURCE_DEFAULTS: Record<SourceName, Record<string, string>> = {
	linear: { team: "ENG", pick_from: "Todo", in_progress: "In Progress", done: "In Review" },
	trello: {
		team: "My Board",
		pick_from: "Ready for AI",
		in_progress: "In Progress",
		done: "In Review",
	},
	github: { team: "acme/api", pick_from: "open", in_progress: "in progress", done: "in review" },
};

/** The example config set up for `source`, its comments kept. */
export function configTemplate(source: SourceName): string {
	const doc = parseDocument(readFileSync(EXAMPLE, "utf8"));
	doc.set("source", source);
	for (const [key, value] of Object.entries(SOURCE_DEFAULTS[source]))
		doc.setIn(["source_config", key], value);
	return doc.toString(WRITE_OPTIONS);
}

export interface InitOptions {
	file: string;
	source?: string;
	force: boolean;
}

export async function initCommand(
	opts: InitOptions,
	print: (line: string) => void,
): Promise<number> {
	const source = (opts.source ?? "linear") as SourceName;
	if (!SOURCES.includes(source))
		throw new CliError(`--source must be one of ${SOURCES.join(", ")} (got "${opts.source}")`);
	if (existsSync(opts.file) && !opts.force)
		throw new CliError(
			`${opts.file} already exists: pass --force to overwrite it, or change it with \`npx lisa config --set\``,
		);
	await mkdir(path.dirname(opts.file), { recursive: true });
	await writeFile(opts.file, configTemplate(source));
	print(`wrote ${opts.file} (source: ${source})`);
	print(
		"next: point repos at your repositories (npx lisa config --set repos.0.url=…), export the credentials, then run npx lisa doctor",
	);
	return 0;
}
