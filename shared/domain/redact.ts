// Secret redaction for everything that leaves a process as text: events, logs, output tails.

const TOKEN_PATTERNS: RegExp[] = [
	/\blin_(?:api|whs|oauth)_[A-Za-z0-9]{16,}\b/g, // Linear API keys and webhook secrets
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

/** Replaces token-shaped strings and the given secret values with `[redacted]`. */
export function redact(text: string, secrets: readonly string[] = []): string {
	let out = text;
	for (const s of secrets) if (s.length >= MIN_SECRET_LENGTH) out = out.split(s).join("[redacted]");
	for (const re of TOKEN_PATTERNS) out = out.replace(re, "[redacted]");
	return out.replace(ASSIGNMENT, "$1$2$3[redacted]");
}

/** Keeps the head and tail of long output so a bounded excerpt still shows the start and the error. */
export function headTail(text: string, max: number): string {
	if (text.length <= max) return text;
	const half = Math.floor((max - 40) / 2);
	const elided = text.length - 2 * half;
	return `${text.slice(0, half)}\n… [${elided} characters elided] …\n${text.slice(-half)}`;
}

/** The last `max` characters, cut at a line start when possible. */
export function tail(text: string, max: number): string {
	if (text.length <= max) return text;
	const cut = text.slice(-max);
	const nl = cut.indexOf("\n");
	return nl >= 0 && nl < max / 4 ? cut.slice(nl + 1) : cut;
}
