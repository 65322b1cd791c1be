// Secret redaction for everything that leaves a process as text: events, logs, output tails.

const TOKEN_PATTERNS: RegExp[] = [
	/\blin_(?:api|wh|whs|oauth)_[A-Za-z0-9]{16,}\b/g, // Linear API keys and webhook secrets
	/\blisa_(?=[A-Za-z0-9_-]*[A-Z0-9])[A-Za-z0-9_-]{32,}/g, // Lisa API tokens (not snake_case names)
	/\bATTA[A-Za-z0-9]{32,}\b/g, // Trello tokens
	/\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}\b/g, // GitHub tokens
	/\bgithub_pat_[A-Za-z0-9_]{20,}\b/g,
	/\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}\b/g, // Anthropic / OpenAI keys
	/\bAIza[0-9A-Za-z_-]{30,}\b/g, // Google API keys
	/\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, // AWS access key ids
	/\bxox[abposr]-[A-Za-z0-9-]{10,}\b/g, // Slack
	/\b[Bb]earer\s+[A-Za-z0-9._~+/=-]{16,}/g,
	/(?<=:\/\/)[^/\s:@]+:[^/\s@]+(?=@)/g, // credentials inside URLs (user:pass@host)
	/\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/g, // JWTs
	/-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g,
];

// `SOME_TOKEN=value`, `password: value`: the name stays, the value goes.
const ASSIGNMENT =
	/\b([A-Za-z0-9_]*(?:TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|ACCESS_KEY))(\s*[=:]\s*)(["']?)[^\s"']{8,}/gi;

const MIN_SECRET_LENGTH = 8;
const PEM_BEGIN = /-----BEGIN [A-Z ]*PRIVATE KEY-----/g;
const PEM_END = /-----END [A-Z ]*PRIVATE KEY-----/;

/** Replaces token-shaped strings and the given secret values with `[redacted]`. */
export function redact(text: string, secrets: readonly string[] = []): string {
	let out = text;
	for (const s of secrets) if (s.length >= MIN_SECRET_LENGTH) out = out.split(s).join("[redacted]");
	for (const re of TOKEN_PATTERNS) out = out.replace(re, "[redacted]");
	return out.replace(ASSIGNMENT, "$1$2$3[redacted]");
}

/** The last `n` lines of output: where a command's error usually is. */
export const lastLines = (text: string, n = 10) => text.trim().split("\n").slice(-n).join("\n");

/** Keeps the head and tail of long output so a bounded excerpt still shows the start and the error. */
export function headTail(text: string, max: number): string {
	if (text.length <= max) return text;
	const half = Math.floor((max - 40) / 2);
	const elided = text.length - 2 * half;
	return `${text.slice(0, half)}\n… [${elided} characters elided] …\n${text.slice(-half)}`;
}

/**
 * The last `max` characters, cut at a line start when possible. Cut inside a line, it drops the
 * word the cut went through, which could be the end of a token too short to recognise alone.
 */
export function tail(text: string, max: number): string {
	if (text.length <= max) return text;
	const cut = text.slice(-max);
	const nl = cut.indexOf("\n");
	if (nl >= 0 && nl < max / 4) return cut.slice(nl + 1);
	return /\s/.test(text[text.length - max - 1] ?? "") ? cut : `…${cut.replace(/^\S+/, "")}`;
}

/**
 * Redaction of a stream that is shown in pieces (an agent's output, every 30 s): a secret split
 * between two pieces would pass in halves, so the last, unfinished line is held back until it ends
 * (up to `maxHeld` characters, then cut after its last whitespace), and a private key that began in
 * an earlier piece stays redacted up to its END line.
 */
export class StreamRedactor {
	private held = "";
	private inKey = false;

	constructor(
		private readonly secrets: readonly string[],
		private readonly maxHeld = 4096,
	) {}

	/** What of the stream so far can be shown, redacted. */
	push(chunk: string): string {
		const text = this.held + chunk;
		let cut = text.lastIndexOf("\n") + 1;
		if (text.length - cut > this.maxHeld) {
			const space = Math.max(text.lastIndexOf(" "), text.lastIndexOf("\t"));
			cut = space >= cut && text.length - space - 1 <= this.maxHeld ? space + 1 : text.length;
		}
		this.held = text.slice(cut);
		return this.redact(text.slice(0, cut));
	}

	/** The rest, when the stream has ended. */
	end(): string {
		const rest = this.held;
		this.held = "";
		return this.redact(rest);
	}

	private redact(text: string): string {
		let out = text;
		if (this.inKey) {
			const end = PEM_END.exec(out);
			if (!end) return out ? "[redacted]" : "";
			out = `[redacted]${out.slice(end.index + end[0].length)}`;
			this.inKey = false;
		}
		const begins = [...out.matchAll(PEM_BEGIN)];
		const last = begins[begins.length - 1];
		if (last?.index !== undefined && !PEM_END.test(out.slice(last.index))) this.inKey = true;
		return redact(out, this.secrets);
	}
}
