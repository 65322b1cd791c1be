// The built-in agent's text protocol (the original Lisa CLI's, after mini-swe-agent v1): every reply is a THOUGHT
// and exactly one ```bash block; the command's output comes back as the next user message. Pure.

export const COMPLETE_MARKER = "TASK_COMPLETE";

export const SYSTEM_PROMPT = `You are an autonomous software engineer working in a git repository through a bash shell.

Every reply has two parts: a THOUGHT section with your reasoning, then exactly ONE bash code block with
exactly one command (chain steps with && or || when they belong together):

THOUGHT: why this is the next step

\`\`\`bash
your-command --here
\`\`\`

Rules:
- Each command runs in a fresh \`bash -c\` in the repository root: \`cd\` and variables do not persist.
- Commands must not be interactive: no editors, pagers or prompts. Edit files with \`sed -i\`,
  \`cat <<'EOF' > file\`, or a short python or node script.
- Wait for the output of a command before deciding the next one; check that each step worked.
- Commands that run too long are killed; long output is cut in the middle.
- When the task is completely done (changes committed, manifest written), reply with exactly:

THOUGHT: the task is complete.

\`\`\`bash
echo ${COMPLETE_MARKER}
\`\`\``;

export function taskMessage(task: string): string {
	return `${task}

Work through bash commands, one per reply, as described. When everything above is done, run
\`echo ${COMPLETE_MARKER}\`.`;
}

const ACTION = /```bash\s*\n([\s\S]*?)\n```/g;

export type Action = { command: string } | { formatError: string };

/** The one command of a reply, or the feedback that tells the model what was wrong. */
export function parseAction(reply: string): Action {
	const blocks = [...reply.matchAll(ACTION)].map((m) => m[1] ?? "");
	if (blocks.length === 0)
		return {
			formatError: `No bash command found. Reply with a THOUGHT and exactly ONE \`\`\`bash block. If the task is complete, run \`echo ${COMPLETE_MARKER}\`.`,
		};
	if (blocks.length > 1)
		return {
			formatError: `Found ${blocks.length} bash blocks; reply with exactly ONE \`\`\`bash block per message (chain commands with && if needed).`,
		};
	const command = (blocks[0] ?? "").trim();
	if (!command) return { formatError: "The bash block is empty. Put exactly one command in it." };
	return { command };
}

/** TASK_COMPLETE as the first line of the command's stdout ends the run. */
export function isCompletion(stdout: string, exitCode: number | null): boolean {
	return exitCode === 0 && stdout.trimStart().split("\n")[0]?.trim() === COMPLETE_MARKER;
}

const MAX_OBSERVATION = 10_000;
const HALF = 5_000;

/** Output over 10,000 characters keeps its first and last 5,000 (as mini-swe-agent does). */
export function truncateOutput(output: string): string {
	if (output.length <= MAX_OBSERVATION) return output;
	return `${output.slice(0, HALF)}\n\n[... ${output.length - 2 * HALF} characters of output truncated ...]\n\n${output.slice(-HALF)}`;
}

export interface CommandOutcome {
	output: string;
	exitCode: number | null;
	timedOut: boolean;
	timeoutSeconds: number;
}

export function observation(r: CommandOutcome): string {
	const body = truncateOutput(r.output.trimEnd()) || "(no output)";
	if (r.timedOut)
		return `The command timed out after ${r.timeoutSeconds} s and was killed. Partial output:\n${body}`;
	return `<returncode>${r.exitCode ?? "killed"}</returncode>\n<output>\n${body}\n</output>`;
}
