import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTaskWorld, type TaskWorld } from "../support/task";
import { ANTHROPIC_KEY } from "../support/world";

// A hostile agent holds its own key (ANTHROPIC_API_KEY) and tries to smuggle it out encoded —
// base64 at each byte alignment, hex, reversed, spaced out, percent- and JSON-escaped — through
// everything the task passes on: its output (the run's timeline and the task's log), the PR title
// and body (the code host), and its failure (the step's report). Redaction
// (src/domain/redact.ts) must catch every form. The forms are computed here, independently of
// the redactor, and handed to the fake agent as directives (test/doubles/agents/fake-agent.mjs).

const KEY = ANTHROPIC_KEY;
const base64 = (s: string) => Buffer.from(s).toString("base64");
const hex = (s: string) => Buffer.from(s).toString("hex");

const FORMS: Record<string, string> = {
	// `echo "KEY=$ANTHROPIC_API_KEY" | base64`: the key starts at byte 4 (alignment 1).
	"base64 of KEY=<key> and a newline": base64(`KEY=${KEY}\n`),
	// A git credential: byte 15 (alignment 0), padded.
	"base64 of x-access-token:<key>": base64(`x-access-token:${KEY}`),
	// HTTP basic auth: byte 2 (alignment 2).
	"base64 of x:<key>": base64(`x:${KEY}`),
	"base64 of the key alone (padded)": base64(KEY),
	"URL-safe base64 of K=<key>": Buffer.from(`K=${KEY}`).toString("base64url"),
	"URL-safe base64 of ID=<key>": Buffer.from(`ID=${KEY}`).toString("base64url"),
	hex: hex(KEY),
	"upper-case hex": hex(KEY).toUpperCase(),
	"hex bytes with colons": hex(KEY).replace(/(..)(?!$)/g, "$1:"),
	reversed: [...KEY].reverse().join(""),
	"spaced out": [...KEY].join(" "),
	"dotted out": [...KEY].join("."),
	"percent-encoded": hex(KEY).replace(/(..)/g, "%$1"),
	"JSON \\u escapes": [...KEY]
		.map((c) => `\\u${(c.codePointAt(0) as number).toString(16).padStart(4, "0")}`)
		.join(""),
};

/** A form leaks when it shows whole, or its middle third (made of the key alone) does. */
function leaks(texts: readonly string[]): string[] {
	return Object.entries(FORMS).flatMap(([name, form]) => {
		const third = Math.floor(form.length / 3);
		const middle = form.slice(third, form.length - third);
		return texts.some((t) => t.includes(form) || t.includes(middle)) ? [name] : [];
	});
}

/** How many times a text says `[redacted]`: each form leaves one, around what it shares with no secret. */
const redactions = (text = "") => text.split("[redacted]").length - 1;

/** Every string inside a value (an event's data, a log line), besides the value as JSON. */
function strings(value: unknown): string[] {
	if (typeof value === "string") return [value];
	if (value === null || typeof value !== "object") return [];
	return Object.values(value).flatMap(strings);
}

/** The task's output: each JSON log line's strings, and the raw text. */
function logTexts(output: string): string[] {
	const lines = output.split("\n").filter((l) => l.startsWith("{"));
	return [output, ...lines.flatMap((l) => strings(JSON.parse(l)))];
}

let w: TaskWorld;
beforeAll(async () => {
	w = await createTaskWorld();
});
afterAll(async () => {
	await w?.stop();
});

const all = Object.values(FORMS);

describe("an agent that prints its key encoded", () => {
	it("gets none of the forms into the PR, the timeline or the task's log", async () => {
		const title = `feat: ${FORMS.reversed} ${FORMS["base64 of KEY=<key> and a newline"]} ${FORMS["spaced out"]}`;
		const body = all.map((f, i) => `- form ${i}: ${f}`).join("\n");
		const runId = await w.newRun({
			title: "Exfiltrate the key",
			description: [
				`lisa-fake: stdout=${all.join(" | ")}`,
				`lisa-fake: stderr=${all.join(" ")}`,
				`lisa-fake: manifest=${JSON.stringify({ prTitle: title, prBody: body })}`,
			].join("\n"),
		});
		const { code, output } = await (await w.startTask(runId)).exited;
		expect(code).toBe(0);
		const report = (await w.run(runId)).steps[0]?.report;
		expect(report).toMatchObject({ outcome: "succeeded" });

		const pr = w.github.pulls("acme/api").find((p) => p.head.ref === report?.branch);
		expect(redactions(pr?.title)).toBe(3);
		expect(pr?.body?.match(/^- form \d+: \S*\[redacted\]\S*$/gm)).toHaveLength(all.length);
		expect(leaks([pr?.title ?? "", pr?.body ?? ""])).toEqual([]);

		const events = await w.events(runId);
		const shown = events.filter((e) => e.type === "agent.output").map((e) => e.message);
		expect(redactions(shown.join(""))).toBe(2 * all.length); // stdout and stderr
		expect(
			leaks(events.flatMap((e) => [e.message, JSON.stringify(e.data ?? {}), ...strings(e.data)])),
		).toEqual([]);

		expect(output).toMatch(/"msg":"step finished"/);
		expect(redactions(output)).toBeGreaterThanOrEqual(2 * all.length);
		expect(leaks(logTexts(output))).toEqual([]);
	});

	it("gets none of the forms into a plan it writes (the run, the timeline, the tracker's plan comment)", async () => {
		const plan = { steps: [{ repo: "api", scope: `Do it: ${all.join(" ")}`, order: 1 }] };
		const runId = await w.newRun(
			{ title: "Plan with the key", description: `lisa-fake: plan=${JSON.stringify(plan)}` },
			"",
			{ plan: true },
		);
		const report = await w.runTask(runId);
		expect(report).toMatchObject({ outcome: "succeeded" });
		const scope = report?.plan?.steps[0]?.scope ?? "";
		expect(scope).toMatch(/^Do it: /);
		expect(redactions(scope)).toBe(all.length);
		expect(leaks([JSON.stringify(report)])).toEqual([]);
		const events = await w.events(runId);
		expect(events.find((e) => e.type === "plan.valid")?.data?.plan).toEqual(report?.plan);
		expect(
			leaks(events.flatMap((e) => [e.message, JSON.stringify(e.data ?? {}), ...strings(e.data)])),
		).toEqual([]);
	});

	it("gets none of the forms into the step's failure", async () => {
		const runId = await w.newRun({
			title: "Fail with the key",
			description: `lisa-fake: stderr=${all.join(" ")}\nlisa-fake: exit=3`,
		});
		const { code, output } = await (await w.startTask(runId)).exited;
		expect(code).toBe(0);
		const report = (await w.run(runId)).steps[0]?.report;
		expect(report).toMatchObject({ outcome: "failed" });
		expect(report?.error).toMatch(/^claude exited with code 3: /);
		expect(redactions(report?.error)).toBe(all.length);
		expect(leaks([report?.error ?? "", JSON.stringify(report)])).toEqual([]);

		const events = await w.events(runId);
		expect(events.map((e) => e.type)).toContain("agent.failed");
		expect(
			leaks(events.flatMap((e) => [e.message, JSON.stringify(e.data ?? {}), ...strings(e.data)])),
		).toEqual([]);
		expect(leaks(logTexts(output))).toEqual([]);
	});
});
