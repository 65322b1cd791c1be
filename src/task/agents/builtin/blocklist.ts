// The built-in agent's command blocklist (the original Lisa CLI's patterns). The original matched its regexes anywhere
// in the command text, so `rm -f /tmp/x`, `echo asphalt` or a commit message mentioning "halt" were
// refused. Here the command is split the way a shell would (quotes, operators, pipelines, here-docs,
// substitutions) and each rule looks at the program a simple command runs and at its arguments.

interface SimpleCommand {
	words: string[];
	/** Output redirection targets (`>`, `>>`, `&>`, `<>`…). */
	writes: string[];
}

interface Parsed {
	/** Pipelines (`a | b`) of simple commands, in order. */
	pipelines: SimpleCommand[][];
	/** Text of `$(…)`, backquote and `<(…)` substitutions, checked as commands of their own. */
	substitutions: string[];
}

const SEPARATORS = new Set([";", "&&", "||", "&", "\n", "(", ")", ";;"]);

/** Index just past the `)` matching the `(` before `start`, skipping quoted text. */
function closingParen(src: string, start: number): number {
	let depth = 1;
	for (let i = start; i < src.length; i++) {
		const c = src[i];
		if (c === "\\") i++;
		else if (c === "'") i = src.indexOf("'", i + 1) < 0 ? src.length : src.indexOf("'", i + 1);
		else if (c === "(") depth++;
		else if (c === ")" && --depth === 0) return i + 1;
	}
	return src.length;
}

function parse(src: string): Parsed {
	const substitutions: string[] = [];
	const pipelines: SimpleCommand[][] = [];
	let pipeline: SimpleCommand[] = [];
	let cmd: SimpleCommand = { words: [], writes: [] };
	let word = "";
	let inWord = false;
	// What the next word is: a file written to, a word to drop (an input file, a duplicated file
	// descriptor, a here-string) or a here-document terminator.
	let pending: "write" | "drop" | "heredoc" | undefined;
	const heredocs: { tag: string; strip: boolean }[] = [];
	let heredocStrip = false;

	const endWord = () => {
		if (!inWord) return;
		if (pending === "write") cmd.writes.push(word);
		else if (pending === "heredoc") heredocs.push({ tag: word, strip: heredocStrip });
		else if (pending === undefined) cmd.words.push(word);
		pending = undefined;
		word = "";
		inWord = false;
	};
	const endCommand = () => {
		endWord();
		if (cmd.words.length || cmd.writes.length) pipeline.push(cmd);
		cmd = { words: [], writes: [] };
	};
	const endPipeline = () => {
		endCommand();
		if (pipeline.length) pipelines.push(pipeline);
		pipeline = [];
	};
	const substitution = (from: number): number => {
		const end = closingParen(src, from);
		substitutions.push(src.slice(from, end - 1));
		word += "$(…)";
		inWord = true;
		return end;
	};

	let i = 0;
	while (i < src.length) {
		const c = src[i] as string;
		const two = src.slice(i, i + 2);
		if (c === "\\") {
			if (src[i + 1] !== "\n") {
				word += src[i + 1] ?? "";
				inWord = true;
			}
			i += 2;
		} else if (c === "'") {
			const end = src.indexOf("'", i + 1);
			word += src.slice(i + 1, end < 0 ? src.length : end);
			inWord = true;
			i = end < 0 ? src.length : end + 1;
		} else if (c === '"') {
			i++;
			inWord = true;
			while (i < src.length && src[i] !== '"') {
				if (src[i] === "\\") {
					word += src[i + 1] ?? "";
					i += 2;
				} else if (src.startsWith("$(", i)) i = substitution(i + 2);
				else if (src[i] === "`") {
					const end = src.indexOf("`", i + 1);
					substitutions.push(src.slice(i + 1, end < 0 ? src.length : end));
					i = end < 0 ? src.length : end + 1;
				} else word += src[i++];
			}
			i++;
		} else if (two === "$(" || ((two === "<(" || two === ">(") && !inWord)) {
			i = substitution(i + 2);
		} else if (c === "`") {
			const end = src.indexOf("`", i + 1);
			substitutions.push(src.slice(i + 1, end < 0 ? src.length : end));
			word += "`…`";
			inWord = true;
			i = end < 0 ? src.length : end + 1;
		} else if (c === "#" && !inWord) {
			while (i < src.length && src[i] !== "\n") i++;
		} else if (c === " " || c === "\t") {
			endWord();
			i++;
		} else if (c === "\n") {
			endPipeline();
			i++;
			// Here-document bodies are data, not commands: skip to their terminators.
			for (const h of heredocs.splice(0)) {
				while (i < src.length) {
					const eol = src.indexOf("\n", i);
					const line = src.slice(i, eol < 0 ? src.length : eol);
					i = eol < 0 ? src.length : eol + 1;
					if ((h.strip ? line.replace(/^\t+/, "") : line) === h.tag) break;
				}
			}
		} else if (c === "<" && src.startsWith("<<", i) && !src.startsWith("<<<", i)) {
			endWord();
			heredocStrip = src[i + 2] === "-";
			i += heredocStrip ? 3 : 2;
			pending = "heredoc";
		} else if (c === ">" || c === "<" || (two === "&>" && !inWord)) {
			// `2>` and `>&2`: the digits are a file descriptor, not a word.
			if (inWord && /^\d+$/.test(word)) {
				word = "";
				inWord = false;
			}
			endWord();
			const op = /^(?:&>>|&>|>>|>\||>&|<>|<<<|<&|>|<)/.exec(src.slice(i))?.[0] ?? c;
			i += op.length;
			pending = op.includes(">") && op !== ">&" ? "write" : "drop";
		} else if (two === "&&" || two === "||" || two === ";;") {
			endPipeline();
			i += 2;
		} else if (c === "|") {
			endCommand();
			i += src[i + 1] === "&" ? 2 : 1;
		} else if (SEPARATORS.has(c)) {
			endPipeline();
			i++;
		} else {
			word += c;
			inWord = true;
			i++;
		}
	}
	endPipeline();
	return { pipelines, substitutions };
}

// Words that only introduce the real command.
const KEYWORDS = new Set(["!", "{", "}", "if", "then", "else", "elif", "do", "while", "until"]);
const WRAPPERS = new Set([
	"sudo",
	"doas",
	"env",
	"nohup",
	"nice",
	"ionice",
	"time",
	"exec",
	"command",
	"builtin",
	"stdbuf",
	"timeout",
	"xargs",
	"setsid",
]);
// Wrapper options that take a separate value.
const VALUE_OPTIONS = new Set(["-u", "-g", "-n", "-a", "-I", "-P", "-d", "-s", "-k", "-C", "-c"]);

/** The program a simple command runs and its arguments, past assignments and wrappers. */
function program(words: string[]): { name: string; args: string[] } | undefined {
	let i = 0;
	while (i < words.length) {
		const w = words[i] as string;
		if (KEYWORDS.has(w) || /^[A-Za-z_][A-Za-z0-9_]*=/.test(w)) {
			i++;
			continue;
		}
		const name = w.replace(/^\\/, "").split("/").pop() ?? w;
		if (!WRAPPERS.has(name)) return { name, args: words.slice(i + 1) };
		i++;
		const wrapper = name;
		while (i < words.length && (words[i] as string).startsWith("-")) {
			const opt = words[i] as string;
			i += VALUE_OPTIONS.has(opt) && wrapper !== "command" ? 2 : 1;
		}
		if (wrapper === "timeout" && i < words.length) i++; // the duration
	}
	return undefined;
}

const SHELLS = new Set(["sh", "bash", "zsh", "dash", "ksh", "fish"]);
const DOWNLOADERS = new Set(["curl", "wget", "fetch"]);
const SYSTEM_DIRS =
	/^\/(?:bin|boot|dev|etc|home|lib|lib32|lib64|opt|proc|root|run|sbin|srv|sys|usr|var)?\/?\*?$/;
const RM_TARGETS = new Set(["*", ".", "..", "./", "../", "./*", "~", "~/", "~/*", "$HOME"]);
const DISK_DEVICE = /^\/dev\/(?:sd|hd|vd|xvd|nvme|mmcblk|disk|md|dm-|loop|mapper\/)/;

const isRootish = (target: string) =>
	SYSTEM_DIRS.test(target) ||
	RM_TARGETS.has(target.replace(/\$\{HOME\}/g, "$HOME").replace(/^\$HOME\/?\*?$/, "$HOME"));

const flags = (args: string[]) => args.filter((a) => a.startsWith("-"));
const operands = (args: string[]) => args.filter((a) => !a.startsWith("-"));
const hasFlag = (args: string[], short: string, long: string) =>
	flags(args).some(
		(f) => f === long || (!f.startsWith("--") && [...short].some((s) => f.includes(s))),
	);

/** Rules over one simple command; the name of the rule it breaks, if any. */
function commandRule(name: string, args: string[], substitutions: string[]): string | undefined {
	if (["shutdown", "reboot", "halt", "poweroff"].includes(name)) return name;
	if (name === "systemctl" && args.some((a) => ["poweroff", "reboot", "halt", "kexec"].includes(a)))
		return `systemctl ${args.find((a) => !a.startsWith("-"))}`;
	if ((name === "init" || name === "telinit") && ["0", "6"].includes(args[0] ?? ""))
		return "init 0";
	if (name.startsWith("mkfs")) return "mkfs";
	if (name === "dd" && args.some((a) => /^of=\/dev\//.test(a) && !/^of=\/dev\/null$/.test(a)))
		return "dd to a device";
	if (name === "rm") {
		if (args.includes("--no-preserve-root")) return "rm --no-preserve-root";
		if (hasFlag(args, "rRf", "--recursive") && operands(args).some(isRootish))
			return "rm -rf of /, ~, *, . or a system directory";
	}
	if (name === "chmod" && operands(args).includes("777") && operands(args).some(isSystemTarget))
		return "chmod 777 /";
	if (name === "chown" && hasFlag(args, "R", "--recursive") && operands(args).some(isSystemTarget))
		return "chown -R on /";
	if (name === "tee" && operands(args).some(isProtectedFile)) return "write to /etc or a disk";
	if (SHELLS.has(name) && substitutions.some(runsDownloader)) return "download run by a shell";
	return undefined;
}

const isSystemTarget = (t: string) => SYSTEM_DIRS.test(t);
const isProtectedFile = (t: string) => t.startsWith("/etc/") || DISK_DEVICE.test(t);

function runsDownloader(text: string): boolean {
	return parse(text).pipelines.some((p) =>
		p.some((c) => DOWNLOADERS.has(program(c.words)?.name ?? "")),
	);
}

const FORK_BOMB = /([A-Za-z_:][A-Za-z0-9_:]*)\(\)\{\1\|\1&\};\1/;

/**
 * Why `command` must not run, or undefined when it may. Nested shells (`bash -c`, `eval`) and
 * substitutions are checked as commands of their own.
 */
export function blockedReason(command: string, depth = 0): string | undefined {
	if (depth > 4) return undefined;
	if (FORK_BOMB.test(command.replace(/\s+/g, ""))) return "fork bomb";
	const { pipelines, substitutions } = parse(command);
	for (const pipeline of pipelines) {
		let downloaded = false;
		for (const cmd of pipeline) {
			if (cmd.writes.some(isProtectedFile)) return "write to /etc or a disk";
			const prog = program(cmd.words);
			if (!prog) continue;
			if (SHELLS.has(prog.name) && downloaded) return "download piped to a shell";
			if (DOWNLOADERS.has(prog.name)) downloaded = true;
			const rule = commandRule(prog.name, prog.args, substitutions);
			if (rule) return rule;
			const nested =
				SHELLS.has(prog.name) && prog.args.includes("-c")
					? prog.args[prog.args.indexOf("-c") + 1]
					: prog.name === "eval"
						? prog.args.join(" ")
						: undefined;
			const inner = nested ? blockedReason(nested, depth + 1) : undefined;
			if (inner) return inner;
		}
	}
	for (const sub of substitutions) {
		const inner = blockedReason(sub, depth + 1);
		if (inner) return inner;
	}
	return undefined;
}

/** The observation the model gets instead of the output (the original Lisa CLI's wording). */
export function blockedMessage(rule: string): string {
	return `Command blocked for safety: matches rule "${rule}". Please use a safer alternative.`;
}
