import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { findSecrets, redact, StreamRedactor, tail } from "./redact";

describe("redact", () => {
	it.each([
		["a Linear webhook secret (lin_wh_)", `lin_wh_${"a1B2".repeat(8)}`],
		["a Linear webhook signing secret (lin_whs_)", `lin_whs_${"a1B2".repeat(8)}`],
		["a Linear API key", `lin_api_${"a1B2".repeat(8)}`],
		["a Lisa API token", `lisa_${randomBytes(24).toString("base64url")}`],
		["a Trello token", `ATTA${"0a1b2c3d".repeat(9)}`],
		["a GitHub token", `ghs_${"a1B2".repeat(9)}`],
	])("hides %s", (_name, secret) => {
		const out = redact(`token ${secret} in the output`);
		expect(out).toBe("token [redacted] in the output");
	});

	it("leaves snake_case names that only start like a Lisa token", () => {
		const text = "lisa_agent_configuration_loader_for_tests_and_more ran";
		expect(redact(text)).toBe(text);
	});
});

// A password with characters whose base64 is `+` and `/` at every byte alignment (so its URL-safe
// base64 differs), and secrets with JSON-special and non-ASCII characters.
const SECRET = "p4ss~~~word???x-42";
const QUOTED = 'pa"ss\\wo/rd 1';
const UNICODE = "clé-secrète-ünï";
const SECRETS = [SECRET, QUOTED, UNICODE];

const bytes = (s: string) => Buffer.byteLength(s);
const base64 = (s: string) => Buffer.from(s).toString("base64");
const base64url = (s: string) => Buffer.from(s).toString("base64url");
const hex = (s: string) => Buffer.from(s).toString("hex");
const wrap = (s: string, width: number) => s.replace(new RegExp(`(.{${width}})(?=.)`, "g"), "$1\n");

/**
 * What redaction leaves of the base64 of `prefix + secret + suffix`: the characters that share no
 * bit with the secret (those before its first byte's, and, inside longer text, those after its
 * last byte's); padding goes with the secret when it ends the encoding.
 */
function base64Left(encoded: string, prefix: string, secret: string, suffix: string): string {
	const start = Math.ceil((bytes(prefix) * 8) / 6);
	const end = Math.ceil(((bytes(prefix) + bytes(secret)) * 8) / 6);
	return `${encoded.slice(0, start)}[redacted]${suffix ? encoded.slice(end) : ""}`;
}

describe("redact: the known secrets' encodings", () => {
	const prefixes = ["", "K", "K=", "KEY=", "x-access-token:", "ID="];
	const suffixes = ["", "\n", "\nmore"];
	const cases = SECRETS.flatMap((secret) =>
		prefixes.flatMap((prefix) => suffixes.map((suffix) => [secret, prefix, suffix] as const)),
	);

	it.each(cases)(
		"base64 of %j after %j and before %j, either alphabet",
		(secret, prefix, suffix) => {
			const text = `${prefix}${secret}${suffix}`;
			for (const encode of [base64, base64url]) {
				const encoded = encode(text);
				expect(redact(`data: ${encoded} end`, SECRETS)).toBe(
					`data: ${base64Left(encoded, prefix, secret, suffix)} end`,
				);
				expect(findSecrets(encoded, SECRETS)).toEqual([secret]);
			}
		},
	);

	it("covers the URL-safe alphabet where it differs", () => {
		expect(base64(`K${SECRET}`)).toMatch(/[+/]/);
		expect(base64url(`K${SECRET}`)).not.toMatch(/[+/]/);
		expect(redact(base64url(`K${SECRET}`), [SECRET])).toBe("S3[redacted]");
	});

	it("base64 wrapped in lines (`base64` breaks them at 76 characters)", () => {
		const prefix = "The Authorization header for the registry: ";
		const encoded = base64(`${prefix}${SECRET}\n`);
		const wrapped = wrap(encoded, 76);
		// The break after 76 characters is inside the secret's part.
		const start = Math.ceil((bytes(prefix) * 8) / 6);
		const end = Math.ceil(((bytes(prefix) + bytes(SECRET)) * 8) / 6);
		expect(start).toBeLessThan(76);
		expect(end).toBeGreaterThan(76);
		expect(redact(wrapped, [SECRET])).toBe(
			`${encoded.slice(0, start)}[redacted]${wrapped.slice(end + 1)}`,
		);
	});

	it("hex in either case, bytes joined or separated, and wrapped like `xxd -p`", () => {
		const h = hex(SECRET);
		const pairs = h.match(/../g) as string[];
		// A prefix before the first byte stays (percent-encoding is matched as such, from its `%`).
		for (const [form, left] of [
			[h, ""],
			[h.toUpperCase(), ""],
			[pairs.map((p, i) => (i % 2 ? p.toUpperCase() : p)).join(""), ""],
			[pairs.join(" "), ""],
			[pairs.join(":"), ""],
			[pairs.join("-"), ""],
			[h.replace(/(....)/g, "$1 ").trim(), ""], // xxd's groups of two bytes
			[pairs.map((p) => `\\x${p}`).join(""), "\\x"],
			[pairs.map((p) => `0x${p}`).join(", "), "0x"],
			[pairs.map((p) => `%${p.toUpperCase()}`).join(""), ""],
		])
			expect(redact(`bytes ${form}.`, [SECRET])).toBe(`bytes ${left}[redacted].`);
		// The break (at 60) is inside the secret's part (36 to 72).
		const dump = wrap(hex(`the deploy key is ${SECRET}, keep it`), 60);
		expect(dump.slice(36, 73)).toBe(`${hex(SECRET).slice(0, 24)}\n${hex(SECRET).slice(24)}`);
		expect(redact(dump, [SECRET])).toBe(`${hex("the deploy key is ")}[redacted]${dump.slice(73)}`);
		expect(redact(hex(UNICODE), [UNICODE])).toBe("[redacted]");
	});

	it("the secret reversed", () => {
		expect(redact(`olleh ${[...SECRET].reverse().join("")} dlrow`, [SECRET])).toBe(
			"olleh [redacted] dlrow",
		);
		expect(redact([...UNICODE].reverse().join(""), [UNICODE])).toBe("[redacted]");
	});

	it.each([" ", "  ", "\n", "-", ".", "_", ",", ":", ", ", " - ", "|", "/"])(
		"the characters spaced out with %j",
		(separator) => {
			const spaced = [...SECRET].join(separator);
			expect(redact(`it is ${spaced} ok`, [SECRET])).toBe("it is [redacted] ok");
			expect(findSecrets(spaced, [SECRET])).toEqual([SECRET]);
		},
	);

	it("percent-encoded: as encodeURIComponent writes it, fully, in either case, + for a space", () => {
		for (const secret of SECRETS) {
			const full = (hex(secret).match(/../g) as string[]).map((p) => `%${p}`).join("");
			for (const form of [
				encodeURIComponent(secret),
				encodeURI(secret),
				full,
				full.toUpperCase(),
				new URLSearchParams({ k: secret }).toString().slice(2),
			])
				expect(redact(`https://example.com/?k=${form}&x=1`, SECRETS)).toBe(
					"https://example.com/?k=[redacted]&x=1",
				);
		}
		expect(new URLSearchParams({ k: QUOTED }).toString()).toContain("+");
	});

	it("JSON-escaped: as JSON.stringify writes it, with \\/ and with \\u escapes", () => {
		for (const secret of SECRETS) {
			const json = JSON.stringify({ key: secret });
			expect(redact(json, SECRETS)).toBe('{"key":"[redacted]"}');
		}
		expect(JSON.stringify(QUOTED)).toBe('"pa\\"ss\\\\wo/rd 1"');
		expect(redact(JSON.stringify(QUOTED).replace("/", "\\/"), [QUOTED])).toBe('"[redacted]"');
		const escaped = Array.from(
			{ length: UNICODE.length },
			(_, i) => `\\u${UNICODE.charCodeAt(i).toString(16).padStart(4, "0")}`,
		).join("");
		expect(redact(`"${escaped}"`, [UNICODE])).toBe('"[redacted]"');
		expect(redact(`"${escaped.toUpperCase().replace(/\\U/g, "\\u")}"`, [UNICODE])).toBe(
			'"[redacted]"',
		);
	});

	it("a secret with the characters of regular expressions is matched literally", () => {
		const secret = "a.b*c+d?e(f)[g]{h}|i^j$k\\l";
		expect(redact(`x ${secret} y`, [secret])).toBe("x [redacted] y");
		expect(redact("x aXbbbcccd y", [secret])).toBe("x aXbbbcccd y");
	});

	it("a secret inside another's value goes with it", () => {
		const inner = "inner-secret-1234";
		const outer = `user:${inner}@host`;
		expect(redact(`url ${outer} and ${inner}`, [inner, outer])).toBe(
			"url [redacted] and [redacted]",
		);
		expect(redact(base64(outer), [inner, outer])).toBe("[redacted]");
	});

	it("leaves values shorter than 8 characters, in every form", () => {
		const short = "hunter2";
		const forms = [
			short,
			base64(short),
			hex(short),
			[...short].reverse().join(""),
			[...short].join(" "),
		];
		for (const form of forms) expect(redact(`x ${form} y`, [short])).toBe(`x ${form} y`);
		expect(findSecrets(forms.join(" "), [short])).toEqual([]);
	});

	it("leaves ordinary text alone: prose, SHAs, UUIDs, unrelated base64 and hex", () => {
		const secrets = [
			...SECRETS,
			"sk-ant-task-0123456789abcdefghijkl",
			"0123456789abcdef0123456789abcdef01234567",
			"3f6c1a52-9d0e-4b7a-8c21-5e4f6a7b8c9d",
		];
		const text = [
			"The deploy failed because the migration ran before the schema was created. We reordered",
			"the steps, added a test for the empty database, and the pipeline is green again: see the",
			"log at 12:04:31, the word counts (a, b, c, d) and the list 1, 2, 3, 4, 5, 6, 7, 8, 9.",
			"commit 9fceb02d0ae598e95dc970b74767f19372d61af8 (HEAD -> main, origin/main)",
			"request id 123e4567-e89b-12d3-a456-426614174000",
			`payload ${base64("an unrelated payload of some length, for the record")}`,
			`digest ${hex("an unrelated digest input")}`,
			`token ${Buffer.from(Array.from({ length: 48 }, (_, i) => (i * 37 + 11) % 256)).toString("base64")}`,
			"- - - - - - - - . . . . . . , , , , , : : : : _ _ _ _",
			"%7B%22a%22%3A1%7D \\u0041\\u0042 0x41, 0x42 \\x41\\x42",
		].join("\n");
		expect(redact(text, secrets)).toBe(text);
		expect(findSecrets(text, secrets)).toEqual([]);
	});
});

describe("findSecrets", () => {
	it("names the secrets that occur, plain or encoded, in the list's order, once each", () => {
		const other = "another-secret-value";
		const text = `a ${hex(UNICODE)} b ${base64(`KEY=${SECRET}\n`)} c ${SECRET} d`;
		expect(findSecrets(text, [UNICODE, other, SECRET, SECRET])).toEqual([UNICODE, SECRET]);
		expect(findSecrets(text, [SECRET, UNICODE])).toEqual([SECRET, UNICODE]);
		expect(findSecrets("nothing here", [SECRET])).toEqual([]);
		expect(findSecrets(text, [])).toEqual([]);
	});

	it("finds what redact removes", () => {
		const text = `${[...QUOTED].reverse().join("")} ${encodeURIComponent(SECRET)}`;
		expect(redact(text, SECRETS)).toBe("[redacted] [redacted]");
		expect(findSecrets(text, SECRETS)).toEqual([SECRET, QUOTED]);
	});
});

describe("tail", () => {
	it("cut inside a line, drops the word it cut through (a piece of a secret)", () => {
		const secret = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123";
		const text = `${"x".repeat(50)} ${secret} ${"y".repeat(80)}`;
		// 100 characters keep the last 19 of the secret, too short to be recognised on their own.
		const cut = tail(text, 100);
		expect(cut).toBe(`… ${"y".repeat(80)}`);
		expect(redact(tail(text, 100))).not.toContain(secret.slice(-10));
		// A cut on a word boundary keeps everything.
		expect(tail("aaa bbb ccc", 7)).toBe("bbb ccc");
		expect(tail("short", 10)).toBe("short");
	});
});

describe("StreamRedactor", () => {
	const secret = "custom-secret-value-0123456789";
	const show = (chunks: string[], secrets = [secret]) => {
		const r = new StreamRedactor(secrets);
		const pieces = chunks.map((c) => r.push(c));
		pieces.push(r.end());
		return pieces;
	};

	it("holds an unfinished line back, so a secret split between pieces is still one", () => {
		const pieces = show(["first line\nthe key is custom-secr", "et-value-0123456789 ok\nlast"]);
		expect(pieces).toEqual(["first line\n", "the key is [redacted] ok\n", "last"]);
		// A token recognised by its shape, split the same way.
		const gh = `ghp_${"Ab1".repeat(10)}`;
		expect(show([`push ${gh.slice(0, 9)}`, `${gh.slice(9)}\n`], []).join("")).toBe(
			"push [redacted]\n",
		);
		// Bearer and its token in different pieces.
		expect(show(["Authorization: Bearer ", "abcdefghijklmnopqrstuvwxyz\n"], []).join("")).toBe(
			"Authorization: [redacted]\n",
		);
	});

	it("catches a secret's hex and base64 split between two pieces of one line", () => {
		const h = hex(secret);
		expect(show([`dump ${h.slice(0, 21)}`, `${h.slice(21)} done\n`])).toEqual([
			"",
			"dump [redacted] done\n",
			"",
		]);
		const b = base64(`KEY=${secret}\n`);
		const pieces = show([`env ${b.slice(0, 30)}`, `${b.slice(30)}\nnext`]);
		expect(pieces).toEqual(["", `env ${base64Left(b, "KEY=", secret, "\n")}\n`, "next"]);
	});

	it("holds back the lines of a wrapped encoding the next piece may go on", () => {
		const prefix = "the deploy key of the staging cluster is ";
		const encoded = base64(`${prefix}${secret}\n`);
		const [first, second] = wrap(encoded, 76).split("\n") as [string, string];
		// The secret's part starts on the first line and ends on the second: alone, neither is caught.
		expect(redact(first, [secret])).toBe(first);
		expect(redact(second, [secret])).toBe(second);
		expect(show([`begin\n${first}\n`, `${second}\nend\n`])).toEqual([
			"begin\n",
			`${base64Left(encoded, prefix, secret, "\n")}\nend\n`,
			"",
		]);
		// Short words and prose are not held back; a long encoded line is, until a line that ends it,
		// and only as far as the limit.
		const r = new StreamRedactor([secret]);
		expect(r.push("ok\nall good\n")).toBe("ok\nall good\n");
		expect(r.push(`${"a".repeat(40)}\n`)).toBe("");
		expect(r.push("done\n")).toBe(`${"a".repeat(40)}\ndone\n`);
		const limited = new StreamRedactor([secret], 50);
		expect(limited.push(`${"a".repeat(30)}\n${"b".repeat(30)}\n`)).toBe(`${"a".repeat(30)}\n`);
		expect(limited.end()).toBe(`${"b".repeat(30)}\n`);
	});

	it("does not hold a line forever: past the limit it cuts after a space", () => {
		const r = new StreamRedactor([], 20);
		expect(r.push("aaaaaaaaaa bbbbbbbbbbbbbbbbbbbb cc")).toBe("aaaaaaaaaa bbbbbbbbbbbbbbbbbbbb ");
		expect(r.end()).toBe("cc");
	});

	it("keeps a private key redacted to its END line across pieces", () => {
		const pieces = show([
			"before\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n",
			"AAAAsecondhalf\nBBBB\n",
			"-----END RSA PRIVATE KEY-----\nafter\n",
		]);
		expect(pieces.join("")).toBe("before\n[redacted][redacted][redacted]\nafter\n");
		expect(pieces.join("")).not.toMatch(/MIIE|AAAA|BBBB/);
	});
});
