// Reading a prompt's fenced untrusted text back, as the agent would (src/task/prompts/prompt.ts fenceUntrusted).

/** The text of each `untrusted-<label>` fence in the prompt, read as the fence's own length closes it. */
export function fenced(prompt: string, label: string): string[] {
	const out: string[] = [];
	const open = new RegExp(`^(\`{3,})untrusted-${label}\n`, "gm");
	for (const m of prompt.matchAll(open)) {
		const start = (m.index ?? 0) + m[0].length;
		const end = prompt.indexOf(`\n${m[1]}\n`, start - 1);
		out.push(prompt.slice(start, end));
	}
	return out;
}
