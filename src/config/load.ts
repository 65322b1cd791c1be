import { readFileSync } from "node:fs";
import { parse as parseYaml, YAMLParseError } from "yaml";
import { DEFAULT_CONFIG_PATH } from "./default-path";
import { ConfigError, type LisaConfig, parseConfig } from "./schema";

export type ConfigState =
	| { status: "ok"; file: string; config: LisaConfig }
	| { status: "missing"; file: string }
	| { status: "invalid"; file: string; error: ConfigError };

export function parseConfigText(text: string, file: string): LisaConfig {
	let raw: unknown;
	try {
		raw = parseYaml(text);
	} catch (err) {
		if (err instanceof YAMLParseError) {
			const at = err.linePos?.[0];
			throw new ConfigError(file, [
				{
					field: at ? `line ${at.line}, column ${at.col}` : "",
					// The position is the field already: the message says it once.
					message: (err.message.split("\n")[0] ?? "YAML syntax error").replace(
						/ at line \d+, column \d+:?$/,
						"",
					),
					fix: "check the indentation and quoting on that line (YAML indents with spaces)",
				},
			]);
		}
		throw err;
	}
	return parseConfig(raw ?? {}, file);
}

/** Loads the config; a missing or invalid file is a state to report, not a crash. */
export function loadConfig(file: string = DEFAULT_CONFIG_PATH): ConfigState {
	let text: string;
	try {
		text = readFileSync(file, "utf8");
	} catch (err) {
		if ((err as NodeJS.ErrnoException).code === "ENOENT") return { status: "missing", file };
		throw err;
	}
	try {
		return { status: "ok", file, config: parseConfigText(text, file) };
	} catch (err) {
		if (err instanceof ConfigError) return { status: "invalid", file, error: err };
		throw err;
	}
}
