// Follow-up rounds on a run's open pull request (docs/follow-ups.md › Follow-ups): red CI, reviews,
// mentions and Linear session messages each become a round — a new run on the same branch and pull
// request, linked to the run that opened it. Pure: what the pipeline records and decides.

export const FOLLOW_UP_TRIGGERS = ["ci_failure", "review", "mention", "session_prompt"] as const;
export type FollowUpTrigger = (typeof FOLLOW_UP_TRIGGERS)[number];

/** The check conclusions that make a round (GitHub's Checks and Actions APIs). */
export const FAILING_CONCLUSIONS = ["failure", "timed_out", "startup_failure"] as const;

/** `author_association` values of people with write access to the repository. */
const WRITERS = ["OWNER", "MEMBER", "COLLABORATOR"] as const;

/** The longest instruction, review comment or check output a round keeps of each. */
export const MAX_FOLLOW_UP_TEXT = 4 * 1024;

/** The most review threads a round answers, and the longest answer (step.finished stays < 256 KB). */
export const MAX_REPLIES = 50;
export const MAX_REPLY_TEXT = 1500;

/** How much a round's input may hold, serialised: the round's run is one item of ≤ 400 KB. */
export const MAX_ROUND_INPUT_BYTES = 80 * 1024;

export interface FollowUpSettings {
	ci: boolean;
	reviews: boolean;
	mentions: boolean;
	/** `commented` reviews with inline comments make a round too (not only `changes_requested`). */
	review_comments: boolean;
	max_rounds: number;
	/** How long a round waits for more of the same (checks of one commit, a reviewer's comments). */
	debounce_seconds: number;
	/** Logins that may drive Lisa besides OWNER, MEMBER and COLLABORATOR. */
	allow: string[];
}

/** One failing check of a commit, as the prompt shows it (untrusted, trimmed, redacted). */
export interface CiFailure {
	name: string;
	conclusion: string;
	url?: string;
	/** The check's output title and summary. */
	summary?: string;
	annotations: { path?: string; line?: number; message: string }[];
	/** The tail of the job's log (Actions). */
	log?: string;
}

/** One inline comment of a review: what the agent answers, thread by thread. */
export interface ReviewComment {
	id: number;
	path?: string;
	line?: number;
	diffHunk?: string;
	body: string;
	author?: string;
}

export interface ReviewSummary {
	id: number;
	author?: string;
	state: string;
	body?: string;
}

/** What someone asked for: a mention on the pull request, or a message in the Linear session. */
export interface Instruction {
	id: string;
	author?: string;
	body: string;
	via: "comment" | "review_comment" | "session";
	/** When it was written (GitHub's `created_at`, Linear's `createdAt`): it approves only an older request. */
	writtenAt?: string;
}

/** What a round's run works from: the pull request and everything the round answers. */
export interface RoundInput {
	/** 1 for the pull request's first round. */
	number: number;
	prUrl: string;
	/** The configured repo the pull request belongs to. */
	repo: string;
	/** The pull request's branch: the round commits on top of it. */
	branch: string;
	/** The head the round starts from. */
	headSha?: string;
	failures?: CiFailure[];
	reviews?: ReviewSummary[];
	comments?: ReviewComment[];
	instructions?: Instruction[];
}

/** A round being gathered: events arriving within the debounce make one round. */
export interface PendingRound {
	/** The round's run id, chosen when the first event arrived. */
	runId: string;
	trigger: FollowUpTrigger;
	prUrl: string;
	/** A failing commit (CI). */
	headSha?: string;
	reviewIds: number[];
	instructions: Instruction[];
	firstAt: string;
	dueAt: string;
}

export interface RoundRecord {
	runId: string;
	trigger: FollowUpTrigger;
	prUrl: string;
	/** The failing commit the round answered. */
	headSha?: string;
	/** A CI round's failure (failureSignature): the no-progress guard compares the next one with it. */
	signature?: string;
	/** The reviews and instructions the round answered: a redelivered event never makes another. */
	reviewIds?: number[];
	instructionIds?: string[];
	at: string;
}

/** The most a pending round gathers of instructions or reviews (the run is one item of ≤ 400 KB). */
const MAX_PENDING_ITEMS = 20;

/** Kept on the run that opened the pull request. */
export interface FollowUpState {
	/** At most one per pull request. */
	pending?: PendingRound[];
	rounds: RoundRecord[];
	/** Set when the no-progress guard stopped CI rounds. */
	stopped?: { reason: string; at: string };
	/** The round limit was said on the pull request. */
	limitSaid?: boolean;
}

/** One event asking for a round, as the webhook (or the Linear session) reported it. */
export interface FollowUpEvent {
	trigger: FollowUpTrigger;
	prUrl: string;
	headSha?: string;
	reviewId?: number;
	author?: string;
	/** GitHub's `author_association` of the author (absent for Linear, whose members may drive). */
	association?: string;
	/** The Linear user who wrote a session message: asked of Linear before their `continue` approves. */
	authorId?: string;
	instruction?: Instruction;
}

/** What the step's task reports about a round (stepFinished.round). */
export interface RoundReport {
	/** The agent found nothing to change: nothing was pushed. */
	noChange?: boolean;
	/** The agent's summary of the round (redacted). */
	summary?: string;
	/** One answer per review thread, by the thread's first comment id. */
	replies?: { commentId: number; body: string }[];
}

export type Admission =
	/** `joined`: the event is already part of the pending round (a redelivery). */
	| { kind: "ignore"; reason: string; joined?: boolean }
	/** The round limit is reached: `say` the first time. */
	| { kind: "limit"; reason: string; say: boolean }
	/** `schedule`: a new pending round, due after the debounce. */
	| { kind: "add"; state: FollowUpState; schedule: boolean; reason: string };

const sameLogin = (a?: string, b?: string) =>
	a !== undefined && b !== undefined && a.toLowerCase() === b.toLowerCase();

/** Whether the author may start a round: write access, or named in `follow_up.allow`. */
export function mayDrive(
	event: Pick<FollowUpEvent, "trigger" | "author" | "association">,
	settings: FollowUpSettings,
): boolean {
	if (event.trigger === "ci_failure" || event.trigger === "session_prompt") return true;
	if (settings.allow.some((login) => sameLogin(login, event.author))) return true;
	return (WRITERS as readonly string[]).includes(event.association ?? "");
}

const SETTING: Record<FollowUpTrigger, keyof FollowUpSettings> = {
	ci_failure: "ci",
	review: "reviews",
	mention: "mentions",
	session_prompt: "mentions",
};

const LABEL: Record<FollowUpTrigger, string> = {
	ci_failure: "CI failure",
	review: "review",
	mention: "mention",
	session_prompt: "session message",
};
export const triggerLabel = (t: FollowUpTrigger) => LABEL[t];

export function emptyFollowUps(): FollowUpState {
	return { rounds: [] };
}

/**
 * Whether an event starts or joins a round. Several events within the debounce make one round: the
 * first chooses its run id and trigger, later ones add their review or instruction (a newer failing
 * commit replaces an older one).
 */
export function admit(
	state: FollowUpState,
	event: FollowUpEvent,
	settings: FollowUpSettings,
	now: Date,
	newRunId: () => string,
): Admission {
	const setting = SETTING[event.trigger];
	if (!settings[setting])
		return { kind: "ignore", reason: `follow_up.${setting} is off for this repository` };
	if (!mayDrive(event, settings))
		return {
			kind: "ignore",
			reason: `${event.author ?? "someone"} (${event.association ?? "no association"}) may not drive Lisa: only owners, members and collaborators of the repository, or logins in follow_up.allow`,
		};
	const ci = event.trigger === "ci_failure";
	if (ci && state.stopped)
		return { kind: "ignore", reason: `CI rounds stopped: ${state.stopped.reason}` };
	const answered = answeredBy(state.rounds, event);
	if (answered) return { kind: "ignore", reason: `already answered by round ${answered.runId}` };
	const pendings = state.pending ?? [];
	const pending = pendings.find((p) => p.prUrl === event.prUrl);
	if (pending) {
		const merged = joinPending(pending, event, settings, now);
		if (!merged)
			return { kind: "ignore", reason: "already part of the round being gathered", joined: true };
		return {
			kind: "add",
			state: { ...state, pending: pendings.map((p) => (p === pending ? merged : p)) },
			schedule: false,
			reason: `joins round ${pending.runId}`,
		};
	}
	const used = state.rounds.length + pendings.length;
	if (used >= settings.max_rounds)
		return {
			kind: "limit",
			reason: `the run had ${used} follow-up round${used === 1 ? "" : "s"}, the limit (follow_up.max_rounds: ${settings.max_rounds})`,
			say: !state.limitSaid,
		};
	const at = now.toISOString();
	const round: PendingRound = {
		runId: newRunId(),
		trigger: event.trigger,
		prUrl: event.prUrl,
		...(ci && event.headSha ? { headSha: event.headSha } : {}),
		reviewIds: event.reviewId !== undefined ? [event.reviewId] : [],
		instructions: event.instruction ? [event.instruction] : [],
		firstAt: at,
		dueAt: new Date(now.getTime() + settings.debounce_seconds * 1000).toISOString(),
	};
	return {
		kind: "add",
		state: { ...state, pending: [...pendings, round] },
		schedule: true,
		reason: `a ${triggerLabel(event.trigger)} round is gathered for ${settings.debounce_seconds}s`,
	};
}

/** The round that already answered the event: its failing commit, review or instruction. */
function answeredBy(rounds: readonly RoundRecord[], event: FollowUpEvent): RoundRecord | undefined {
	return rounds.find(
		(r) =>
			r.prUrl === event.prUrl &&
			((event.trigger === "ci_failure" &&
				event.headSha !== undefined &&
				r.headSha === event.headSha) ||
				(event.reviewId !== undefined && r.reviewIds?.includes(event.reviewId)) ||
				(event.instruction !== undefined && r.instructionIds?.includes(event.instruction.id))),
	);
}

/** The pending round with the event in it, or undefined when it is already there. */
function joinPending(
	pending: PendingRound,
	event: FollowUpEvent,
	settings: FollowUpSettings,
	now: Date,
): PendingRound | undefined {
	if (event.trigger === "ci_failure") {
		if (!event.headSha || event.headSha === pending.headSha) return undefined;
		// A newer commit failed: the round answers that one, after a fresh quiet period.
		const dueAt = new Date(now.getTime() + settings.debounce_seconds * 1000).toISOString();
		return { ...pending, headSha: event.headSha, dueAt };
	}
	if (event.reviewId !== undefined) {
		if (pending.reviewIds.includes(event.reviewId)) return undefined;
		if (pending.reviewIds.length >= MAX_PENDING_ITEMS) return undefined;
		return { ...pending, reviewIds: [...pending.reviewIds, event.reviewId] };
	}
	const instruction = event.instruction;
	if (!instruction || pending.instructions.some((i) => i.id === instruction.id)) return undefined;
	if (pending.instructions.length >= MAX_PENDING_ITEMS) return undefined;
	return { ...pending, instructions: [...pending.instructions, instruction] };
}

/** The last round that answered red CI on the pull request: the no-progress guard compares with it. */
export const lastCiRound = (state: FollowUpState, prUrl: string): RoundRecord | undefined =>
	state.rounds.filter((r) => r.signature !== undefined && r.prUrl === prUrl).at(-1);

/** Lines that carry a failure's meaning, not its timing: timestamps, hashes and durations go. */
function normalizeLine(line: string): string {
	return line
		.replace(/^\s*\d{4}-\d\d-\d\dT[\d:.]+Z?\s*/, "")
		.replace(/\b[0-9a-f]{7,64}\b/gi, "#")
		.replace(/\b\d+(\.\d+)?\s?(ms|s|sec|seconds|m)\b/g, "#")
		.replace(/\s+/g, " ")
		.trim();
}

const ERROR_LINE = /error|fail|assert|expected|exception|✗|✕|×/i;

/** A check's first error lines: its failure annotations, else its log's, else its summary's. */
export function firstErrorLines(f: CiFailure, count = 3): string[] {
	const fromAnnotations = f.annotations.map((a) => a.message);
	const fromLog = (f.log ?? "").split("\n").filter((l) => ERROR_LINE.test(l));
	const fromSummary = (f.summary ?? "").split("\n");
	const source = [fromAnnotations, fromLog, fromSummary].find((l) => l.some((x) => x.trim()));
	return (source ?? []).map(normalizeLine).filter(Boolean).slice(0, count);
}

/** What a CI failure is, for the no-progress guard: the failing checks and their first error lines. */
export function failureSignature(failures: readonly CiFailure[]): string {
	return [...failures]
		.sort((a, b) => a.name.localeCompare(b.name))
		.map((f) => `${f.name}: ${firstErrorLines(f).join(" | ")}`)
		.join("\n")
		.slice(0, 2000);
}

/** Settings for one repository: the top-level `follow_up`, with the repository's own on top. */
export function followUpSettings(
	config: {
		follow_up: FollowUpSettings;
		repos: { name: string; follow_up?: Partial<FollowUpSettings> }[];
	},
	repo: string,
): FollowUpSettings {
	const own = config.repos.find((r) => r.name === repo)?.follow_up ?? {};
	return { ...config.follow_up, ...own };
}

/**
 * The round's input within MAX_ROUND_INPUT_BYTES: at most MAX_REPLIES review comments, then, while
 * too big, the checks' logs go, then their annotations, then the diff hunks.
 */
export function boundRoundInput(input: RoundInput): RoundInput {
	const size = (r: RoundInput) => JSON.stringify(r).length;
	let out: RoundInput = input.comments
		? { ...input, comments: input.comments.slice(0, MAX_REPLIES) }
		: input;
	const cuts: ((r: RoundInput) => RoundInput)[] = [
		(r) => ({ ...r, failures: r.failures?.map(({ log: _log, ...f }) => f) }),
		(r) => ({
			...r,
			failures: r.failures?.map((f) => ({ ...f, annotations: f.annotations.slice(0, 3) })),
		}),
		(r) => ({ ...r, comments: r.comments?.map(({ diffHunk: _hunk, ...c }) => c) }),
	];
	for (const cut of cuts) if (size(out) > MAX_ROUND_INPUT_BYTES) out = cut(out);
	return out;
}
