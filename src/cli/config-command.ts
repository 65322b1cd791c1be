import { readFileSync } from "node:fs";
import { rename, rm, writeFile } from "node:fs/promises";
import { parseDocument, stringify } from "yaml";
import { loadConfig, parseConfigText } from "../config/load";
import { ConfigError, type LisaConfig } from "../config/schema";
import { formatValue, getPath, parseAssignment, setPath, WRITE_OPTIONS } from "./config-path";
import { CliError } from "./exit";

// `lisa config --show | --get <path> | --set <path>=<value>`.

export interface ConfigOptions {
	file: string;
	show: boolean;
	get?: string;
	set?: string;
}

function effective(file: string): LisaConfig {
	const state = loadConfig(file);
	if (state.status === "missing")
		throw new CliError(`no config at ${file}: run \`npx lisa init\` (or set LISA_CONFIG)`);
	if (state.status === "invalid") throw new CliError(state.error.message);
	return state.config;
}

/** Edits the file in place (comments kept) if the result is a valid config; atomic. */
async function setValue(file: string, assignment: string, print: (l: string) => void) {
	const { path, value } = parseAssignment(assignment);
	let text: string;
	try {
		text = readFileSync(file, "utf8");
	} catch {
		throw new CliError(`no config at ${file}: run \`npx lisa init\` first (or set LISA_CONFIG)`);
	}
	const doc = parseDocument(text);
	if (doc.errors.length) throw new CliError(`${file} is not valid YAML: fix it by hand first`);
	setPath(doc, path, value);
	const next = doc.toString(WRITE_OPTIONS);
	try {
		parseConfigText(next, file);
	} catch (err) {
		if (err instanceof ConfigError)
			throw new CliError(`not written: ${path} would make the config invalid\n${err.message}`);
		throw err;
	}
	const temp = `${file}.${process.pid}.tmp`;
	try {
		await writeFile(temp, next);
		await rename(temp, file);
	} finally {
		await rm(temp, { force: true });
	}
	print(`set ${path} in ${file}`);
}

export async function configCommand(
	opts: ConfigOptions,
	print: (line: string) => void,
): Promise<number> {
	const chosen = [opts.show, opts.get !== undefined, opts.set !== undefined].filter(Boolean);
	if (chosen.length > 1)
		throw new CliError("pass one of --show, --get <path>, --set <path>=<value>");
	if (opts.set !== undefined) await setValue(opts.file, opts.set, print);
	else if (opts.get !== undefined) print(formatValue(getPath(effective(opts.file), opts.get)));
	else print(stringify(effective(opts.file)).trimEnd());
	return 0;
}
