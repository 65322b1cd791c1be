import { describe, expect, it } from "vitest";
import { isCompletion, observation, parseAction, truncateOutput } from "./protocol";

describe("built-in agent protocol", () => {
	it("takes exactly one bash block", () => {
		expect(parseAction("THOUGHT: look\n\n```bash\nls -la\n```")).toEqual({ command: "ls -la" });
		expect(parseAction("THOUGHT: multi-line\n```bash\ncat <<'EOF' > a\nx\nEOF\n```")).toEqual({
			command: "cat <<'EOF' > a\nx\nEOF",
		});
		expect(parseAction("I think we are done.")).toMatchObject({
			formatError: expect.stringMatching(/^No bash command found/),
		});
		expect(parseAction("```bash\nls\n```\nthen\n```bash\npwd\n```")).toMatchObject({
			formatError: expect.stringMatching(/^Found 2 bash blocks/),
		});
		expect(parseAction("```bash\n  \n```")).toMatchObject({
			formatError: expect.stringMatching(/empty/),
		});
		expect(parseAction("```sh\nls\n```")).toHaveProperty("formatError");
	});

	it("ends only on TASK_COMPLETE as the first stdout line of a successful command", () => {
		expect(isCompletion("TASK_COMPLETE\n", 0)).toBe(true);
		expect(isCompletion("\n  TASK_COMPLETE\nsummary", 0)).toBe(true);
		expect(isCompletion("hello\nTASK_COMPLETE\n", 0)).toBe(false);
		expect(isCompletion("TASK_COMPLETE\n", 1)).toBe(false);
		expect(isCompletion("TASK_COMPLETED\n", 0)).toBe(false);
	});

	it("keeps the head and tail of long output", () => {
		const out = truncateOutput(`${"a".repeat(8000)}${"z".repeat(8000)}`);
		expect(out.startsWith("a".repeat(5000))).toBe(true);
		expect(out.endsWith("z".repeat(5000))).toBe(true);
		expect(out).toContain("[... 6000 characters of output truncated ...]");
		expect(truncateOutput("short")).toBe("short");
	});

	it("formats observations with the exit code, or the timeout", () => {
		expect(observation({ output: "hi\n", exitCode: 0, timedOut: false, timeoutSeconds: 30 })).toBe(
			"<returncode>0</returncode>\n<output>\nhi\n</output>",
		);
		expect(observation({ output: "", exitCode: 2, timedOut: false, timeoutSeconds: 30 })).toContain(
			"(no output)",
		);
		expect(
			observation({ output: "part", exitCode: null, timedOut: true, timeoutSeconds: 30 }),
		).toBe("The command timed out after 30 s and was killed. Partial output:\npart");
	});
});
