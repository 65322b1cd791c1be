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
const REDACTED = "[redacted]";

/*
 * Known secret values (MIN_SECRET_LENGTH characters or more: shorter ones would redact ordinary
 * words) are redacted in the forms a shell one-liner prints them in, not only verbatim. Each form is
 * one layer deep (base64 of hex is not caught) and matched wherever it is inside larger text:
 * - escaped: each character as itself, percent-encoded (`%2F` or `%2f`, a space also as `+`) or
 *   JSON-escaped (`\"`, `\\`, `\/`, `\n`, `\u002f`), in any mix, so URL- and JSON-encoded text;
 * - spaced out: the characters separated by whitespace or by one of `- . _ , : ; | /` (with
 *   whitespace around it or not);
 * - reversed;
 * - hex of the UTF-8 bytes, either case, the bytes joined directly or by up to two of whitespace and
 *   `, : ; . _ -`, each byte optionally prefixed `0x`, `\x` or `%` (`xxd -p`, `od`, C arrays);
 * - base64, standard or URL-safe, with or without padding, wrapped or not (`base64` breaks lines at
 *   76). Inside a longer encoding (`echo "KEY=$SECRET" | base64`, `x-access-token:<token>`) the secret
 *   starts at one of three byte alignments; each gives a core of characters that depend on the
 *   secret alone (the first ones of an unaligned start, and the last one, share bits with the bytes
 *   around). The three cores are matched, each with its partial last character and padding when
 *   there; a core shorter than MIN_BASE64_CORE would be matched by chance, so it is left out.
 * The patterns are compiled once per list of secrets (`redact` runs on every output chunk of an
 * agent): a pass per kind of form, a group per secret, the longest secrets first so that a secret
 * inside another one's value does not leave the rest of it. `findSecrets` reads the groups.
 */
const MIN_BASE64_CORE = 10; // 60 bits of the secret; every secret of MIN_SECRET_LENGTH bytes has one
const SPACER = String.raw`(?:\s*[-._,:;|/]\s*|\s+)`;
const HEX_SEPARATOR = String.raw`[\s,:;._-]{0,2}(?:0[xX]|\\x|%)?`;
const WRAP = String.raw`(?:\r?\n)?`;
const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URL_SAFE: Record<string, string> = { "+": "-", "/": "_" };

const literal = (s: string) => s.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");
const hexDigits = (n: number, width: number) =>
	[...n.toString(16).padStart(width, "0")]
		.map((d) => (d >= "a" ? `[${d}${d.toUpperCase()}]` : d))
		.join("");

/** One character of a secret: as itself, percent-encoded or JSON-escaped. */
function escapedChar(c: string): string {
	const forms = [
		literal(c),
		[...new TextEncoder().encode(c)].map((b) => `%${hexDigits(b, 2)}`).join(""),
		Array.from(
			{ length: c.length },
			(_, i) => `${literal("\\u")}${hexDigits(c.charCodeAt(i), 4)}`,
		).join(""),
	];
	const json = JSON.stringify(c).slice(1, -1);
	if (json !== c) forms.push(literal(json));
	if (c === "/") forms.push(literal("\\/"));
	if (c === " ") forms.push(literal("+"));
	return `(?:${forms.join("|")})`;
}

/** A base64 character (either alphabet) of a 6-bit value. */
function base64Char(value: number): string {
	const c = BASE64[value] as string;
	return URL_SAFE[c] ? `[${literal(c)}${literal(URL_SAFE[c])}]` : c;
}

/** The cores of the secret's base64 at the three byte alignments (see above). */
function base64Forms(bytes: Uint8Array): string[] {
	const forms: string[] = [];
	for (const align of [0, 1, 2]) {
		const bits = (align + bytes.length) * 8;
		const sextet = (i: number) => {
			let v = 0;
			for (let b = i * 6; b < i * 6 + 6; b++) {
				const byte = b < bits ? (bytes[Math.floor(b / 8) - align] ?? 0) : 0;
				v = (v << 1) | ((byte >> (7 - (b % 8))) & 1);
			}
			return v;
		};
		const first = Math.ceil((align * 8) / 6);
		const full = Math.floor(bits / 6);
		if (full - first < MIN_BASE64_CORE) continue;
		const core: string[] = [];
		for (let i = first; i < full; i++) core.push(base64Char(sextet(i)));
		let form = core.join(WRAP);
		const rest = bits % 6; // bits of the last byte in the next character (2 or 4), or none
		if (rest) {
			const known = sextet(full);
			const chars: string[] = [];
			for (let v = known; v < known + (1 << (6 - rest)); v++) chars.push(base64Char(v));
			form += `(?:${WRAP}(?:${chars.join("|")})={0,2})?`;
		}
		forms.push(form);
	}
	return forms;
}

/** Every form of one secret, as regular expression sources. */
function secretForms(secret: string): string[] {
	const chars = [...secret];
	const bytes = new TextEncoder().encode(secret);
	return [
		chars.map(escapedChar).join(""),
		chars.map(literal).join(SPACER),
		chars.reverse().map(literal).join(""),
		[...bytes].map((b) => hexDigits(b, 2)).join(HEX_SEPARATOR),
		...base64Forms(bytes),
	];
}

/** One pass over the text: a group per secret, whose value `secrets` gives in group order. */
interface Pass {
	pattern: RegExp;
	secrets: string[];
}

/** V8 stops optimising a regular expression this long: it ran 25 times slower (measured). */
const MAX_PATTERN = 16_000;
const compiled = new Map<string, Pass[]>();
const MAX_COMPILED = 16;

/**
 * The list's passes, compiled on its first use (lists are few: a process's, a task's). A pass holds
 * one kind of form, the longest secrets first; a kind too long for one pattern takes several.
 */
function compile(list: readonly string[]): Pass[] {
	const key = JSON.stringify(list);
	const cached = compiled.get(key);
	if (cached) return cached;
	const secrets = [...new Set(list)]
		.filter((s) => s.length >= MIN_SECRET_LENGTH)
		.sort((a, b) => b.length - a.length);
	const forms = secrets.map(secretForms);
	const passes: Pass[] = [];
	for (let kind = 0; kind < (forms[0]?.length ?? 0); kind++) {
		let sources: string[] = [];
		let names: string[] = [];
		const close = () => {
			if (sources.length)
				passes.push({ pattern: new RegExp(sources.join("|"), "g"), secrets: names });
			sources = [];
			names = [];
		};
		secrets.forEach((secret, i) => {
			const source = forms[i]?.[kind];
			if (source === undefined) return;
			if (sources.join("|").length + source.length > MAX_PATTERN) close();
			sources.push(`(${source})`);
			names.push(secret);
		});
		close();
	}
	if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value as string);
	compiled.set(key, passes);
	return passes;
}

/** The text without the secrets' forms; each secret removed is added to `found`. */
function removeSecrets(text: string, list: readonly string[], found?: Set<string>): string {
	let out = text;
	for (const { pattern, secrets } of compile(list))
		out = found
			? out.replace(pattern, (...groups: unknown[]) => {
					const i = groups.slice(1, secrets.length + 1).findIndex((g) => g !== undefined);
					found.add(secrets[i] as string);
					return REDACTED;
				})
			: out.replace(pattern, REDACTED);
	return out;
}

/**
 * The given secrets that occur in the text, verbatim or encoded: those `redact` removes, in the
 * list's order. A secret that occurs only inside another one's value is not reported.
 */
export function findSecrets(text: string, secrets: readonly string[]): string[] {
	const found = new Set<string>();
	removeSecrets(text, secrets, found);
	return [...new Set(secrets)].filter((s) => found.has(s));
}

/** Replaces token-shaped strings and the given secret values (in their encodings) with `[redacted]`. */
export function redact(text: string, secrets: readonly string[] = []): string {
	let out = removeSecrets(text, secrets);
	for (const re of TOKEN_PATTERNS) out = out.replace(re, REDACTED);
	return out.replace(ASSIGNMENT, `$1$2$3${REDACTED}`);
}

/** Text on one line (white space folded), cut to `max` characters. */
export function oneLine(text: string, max = 120): string {
	const line = text.replace(/\s+/g, " ").trim();
	return line.length > max ? `${line.slice(0, max - 1)}…` : line;
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

/** A line of a wrapped encoding: base64 (76 or 64 columns), hex (`xxd -p`, 60); full ones are long. */
const ENCODED_LINE = /^[A-Za-z0-9+/=_-]*\r?$/;
const MIN_ENCODED_LINE = 16;

/**
 * Redaction of a stream that is shown in pieces (an agent's output, every 30 s): a secret split
 * between two pieces would pass in halves, so the last, unfinished line is held back until it ends
 * (up to `maxHeld` characters, then cut after its last whitespace), and a private key that began in
 * an earlier piece stays redacted up to its END line. The full lines of a wrapped encoding before it
 * (ENCODED_LINE) are held back with it: a secret's form may go on in the next piece.
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
		let cut = this.heldFrom(text);
		if (text.length - cut > this.maxHeld) {
			const space = Math.max(text.lastIndexOf(" "), text.lastIndexOf("\t"));
			cut = space >= cut && text.length - space - 1 <= this.maxHeld ? space + 1 : text.length;
		}
		this.held = text.slice(cut);
		return this.redact(text.slice(0, cut));
	}

	/** Where the part to hold back starts: the last line, and the encoded lines it may continue. */
	private heldFrom(text: string): number {
		let cut = text.lastIndexOf("\n") + 1;
		if (!ENCODED_LINE.test(text.slice(cut))) return cut;
		while (cut > 0) {
			const start = text.lastIndexOf("\n", cut - 2) + 1;
			const line = text.slice(start, cut - 1);
			if (line.length < MIN_ENCODED_LINE || !ENCODED_LINE.test(line)) break;
			if (text.length - start > this.maxHeld) break;
			cut = start;
		}
		return cut;
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
