import { ulid } from "ulid";
import { commentRefusal } from "../domain/budget";
import { isContinue } from "../domain/commands";
import {
	type Admission,
	admit,
	boundRoundInput,
	type CiFailure,
	emptyFollowUps,
	type FollowUpEvent,
	type FollowUpSettings,
	type FollowUpState,
	failureSignature,
	followUpSettings,
	type Instruction,
	lastCiRound,
	MAX_FOLLOW_UP_TEXT,
	mayDrive,
	type PendingRound,
	type RoundInput,
	type RoundRecord,
	triggerLabel,
} from "../domain/follow-up";
import { headTail, redact, tail } from "../domain/redact";
import { guardComment, limitComment } from "../domain/round-comments";
import { newRun, type Run } from "../domain/run";
import { NotConfigured, TrackerError } from "../integrations/tracker";
import {
	type FollowUpDue,
	type FollowUpRequested,
	followUpDue,
	requestAgain,
} from "../queue/messages";
import { approveFrom } from "./approve";
import { roundRuns } from "./budget";
import type { PipelineDeps } from "./deps";
import { mutate, note } from "./mutate";
import { sayOnIssueAndPullRequests } from "./report";
import { type ApproverVerdict, sessionApprover } from "./session-approver";

// Follow-up rounds (docs/follow-ups.md › Follow-ups). `followup.requested` records an event on the
// run that opened the pull request; the first one of a round schedules `followup.due` after the
// debounce, so a commit's failing checks or a reviewer's comments make one round. When due, the
// round is gathered from GitHub (the checks' output and logs, the reviews' comments), judged by the
// no-progress guard, and started as a run of its own through the intake, which makes it wait for
// any other run of the issue.

/** How long a CI round waits for the commit's other checks to complete before it goes ahead. */
const MAX_CHECKS_WAIT_MS = 15 * 60_000;
/** How often a CI round looks again while checks of its commit still run (or the debounce, if longer). */
const CHECKS_POLL_SECONDS = 15;
/** SQS delays a message at most 15 minutes. */
const MAX_DELAY_SECONDS = 900;

/** The run that opened the pull request: a round's parent, or the run itself. */
export async function originalRun(deps: PipelineDeps, runId: string): Promise<Run | undefined> {
	const run = await deps.store.getRun(runId);
	return run?.parentRunId ? deps.store.getRun(run.parentRunId) : run;
}

/** The current config's settings for the repository (a change applies to the next event). */
function settingsFor(deps: PipelineDeps, run: Run, repo: string): FollowUpSettings | undefined {
	const state = deps.config();
	const config = state.status === "ok" ? state.config : run.config;
	return config ? followUpSettings(config, repo) : undefined;
}

function describe(event: FollowUpEvent): string {
	const who = event.author ? ` by ${event.author}` : "";
	if (event.trigger === "ci_failure")
		return `failing checks on ${event.headSha?.slice(0, 12) ?? "the head commit"}`;
	return `a ${triggerLabel(event.trigger)}${who}`;
}

/**
 * `followup.requested`: the event joins (or starts) the pull request's pending round. Returns what
 * became of it ("add": it is part of a round).
 */
export async function handleFollowUpRequested(
	deps: PipelineDeps,
	msg: Omit<FollowUpRequested, "type">,
): Promise<Admission["kind"] | undefined> {
	const parent = await originalRun(deps, msg.runId);
	if (!parent) {
		deps.log.warn({ runId: msg.runId }, "follow-up for an unknown run ignored");
		return undefined;
	}
	const { runId: _runId, requestedAt: _requestedAt, ...event } = msg;
	const step = parent.steps.find((s) => s.prUrl === msg.prUrl);
	const closed = parent.closedPullRequests?.some((p) => p.url === msg.prUrl);
	const settings = step && settingsFor(deps, parent, step.repo);
	if (!step || closed || !settings) {
		const why = !step
			? `${msg.prUrl} is not a pull request of this run`
			: closed
				? `${msg.prUrl} is closed`
				: "the run has no config";
		await note(deps, parent.runId, "followup.ignored", `${describe(event)} ignored: ${why}`);
		return "ignore";
	}

	if (msg.instruction && isContinue(msg.instruction.body, msg.instruction.via === "session"))
		return continueRuns(deps, parent, event, msg.instruction, settings);

	// A new round's due message goes out before the round is written: a crash in between leaves a
	// message that finds no round (and does nothing), never a round that no message wakes.
	const roundId = ulid();
	const admitNow = (r: Run) =>
		admit(r.followUps ?? emptyFollowUps(), event, settings, deps.now(), () => roundId);
	const planned = admitNow(parent);
	const newRound = (a: Admission) =>
		a.kind === "add" && a.schedule ? a.state.pending?.find((p) => p.runId === roundId) : undefined;
	const early = newRound(planned);
	if (early) await scheduleDue(deps, parent, early);
	const res = await mutate(deps, parent.runId, (r) => {
		const state = r.followUps ?? emptyFollowUps();
		const admission: Admission = admitNow(r);
		if (admission.kind === "add")
			return { admission, patch: { set: { followUps: admission.state } } };
		if (admission.kind === "limit" && admission.say)
			return { admission, patch: { set: { followUps: { ...state, limitSaid: true } } } };
		return { admission };
	});
	if (!res) return undefined;
	const { admission } = res.decision;
	// The run changed between the look and the write (the round it would have joined started).
	const late = res.changed && !early ? newRound(admission) : undefined;
	if (late) await scheduleDue(deps, res.run, late);
	const what = describe(event);
	if (admission.kind === "ignore")
		await note(deps, parent.runId, "followup.ignored", `${what} ignored: ${admission.reason}`, {
			data: { trigger: event.trigger, author: event.author, association: event.association },
		});
	else if (admission.kind === "limit") {
		await note(deps, parent.runId, "followup.limit", `${what}: no round: ${admission.reason}`);
		if (admission.say && res.changed)
			await sayOnIssueAndPullRequests(
				deps,
				parent,
				[msg.prUrl],
				limitComment(parent, admission.reason, deps.runUrl(parent.runId)),
			);
	} else if (res.changed)
		await note(deps, parent.runId, "followup.requested", `${what}: ${admission.reason}`, {
			data: { trigger: event.trigger },
		});
	// A round whose due messages all got lost (or failed for good) is woken by the next event.
	const stale = res.run.followUps?.pending?.find(
		(p) =>
			p.prUrl === event.prUrl &&
			Date.parse(p.dueAt) < deps.now().getTime() - MAX_CHECKS_WAIT_MS - 60_000,
	);
	if (stale) await scheduleDue(deps, res.run, stale);
	return admission.kind;
}

/**
 * `/lisa continue` on the pull request (or in the Linear session): a yes to the pending approval of
 * the run or round that waits on it (docs/cost.md › Cost and budgets), from someone who may drive
 * Lisa.
 */
async function continueRuns(
	deps: PipelineDeps,
	parent: Run,
	event: FollowUpEvent,
	instruction: Instruction,
	settings: FollowUpSettings,
): Promise<"ignore"> {
	const who = event.author ?? "someone";
	const runs = [parent, ...(await roundRuns(deps, parent)).reverse()];
	const waiting = runs.find((r) => r.status === "awaiting_approval");
	const comment = { id: instruction.id, writtenAt: instruction.writtenAt };
	// In a Linear session, Linear is asked who wrote it; on GitHub, the event carries it.
	const approver: ApproverVerdict =
		instruction.via === "session"
			? await sessionApprover(deps, parent, { id: event.authorId, name: event.author })
			: mayDrive(event, settings)
				? { by: who }
				: {
						refused: `${who} may not approve spending (author_association ${event.association ?? "none"}; see follow_up.allow)`,
					};
	const why =
		"refused" in approver
			? approver.refused
			: !waiting?.approval
				? "no run of this pull request waits for approval"
				: // Once for the whole pull request: its runs' approvals, not only the waiting one's.
					commentRefusal(
						waiting.approval,
						runs.flatMap((r) => r.approvals ?? []),
						comment,
					);
	if (why || !waiting || "refused" in approver) {
		await note(deps, parent.runId, "approval.ignored", `\`/lisa continue\` by ${who}: ${why}`);
		return "ignore";
	}
	const via = instruction.via === "session" ? "linear" : "github";
	await approveFrom(deps, waiting, approver.by, via, comment, approver.byId);
	return "ignore";
}

async function scheduleDue(
	deps: PipelineDeps,
	run: Run,
	pending: PendingRound,
	afterMs?: number,
): Promise<void> {
	const wait = afterMs ?? Date.parse(pending.dueAt) - deps.now().getTime();
	await deps.queue.send("events", followUpDue({ runId: run.runId, roundId: pending.runId }), {
		delaySeconds: Math.min(MAX_DELAY_SECONDS, Math.max(0, Math.ceil(wait / 1000))),
	});
}

/** `followup.due`: the round's debounce is over; gather it from GitHub and start its run. */
export async function handleFollowUpDue(deps: PipelineDeps, msg: FollowUpDue): Promise<void> {
	const parent = await deps.store.getRun(msg.runId);
	const pending = pendingOf(parent, msg.roundId);
	// Started already (a redelivery), or dropped: nothing to do.
	if (!parent || !pending) return;
	const now = deps.now().getTime();
	if (Date.parse(pending.dueAt) - now > 1000) return scheduleDue(deps, parent, pending);
	const step = parent.steps.find((s) => s.prUrl === pending.prUrl);
	const settings = step && settingsFor(deps, parent, step.repo);
	if (!step || !settings)
		return drop(deps, parent, pending, "the run no longer has this pull request");

	let gathered: Gathered;
	try {
		gathered = await gather(deps, parent, pending, step.repo, settings);
	} catch (err) {
		if (err instanceof TrackerError && err.transient) throw err;
		if (!(err instanceof TrackerError || err instanceof NotConfigured)) throw err;
		return drop(
			deps,
			parent,
			pending,
			`GitHub could not be asked about ${pending.prUrl}: ${err.message}`,
		);
	}
	if (gathered.kind === "wait")
		return scheduleDue(
			deps,
			parent,
			pending,
			Math.max(CHECKS_POLL_SECONDS, settings.debounce_seconds) * 1000,
		);
	if (gathered.kind === "drop") return drop(deps, parent, pending, gathered.reason);
	if (gathered.kind === "stuck") return stop(deps, parent, pending, gathered.failures);
	// What joined while GitHub was asked belongs in this round: gather again, at once.
	const current = await deps.store.getRun(parent.runId);
	if (JSON.stringify(pendingOf(current, pending.runId)) !== JSON.stringify(pending))
		return scheduleDue(deps, parent, pending, 0);
	await startRound(deps, parent, pending, gathered.input, gathered.signature);
}

const pendingOf = (run: Run | undefined, roundId: string): PendingRound | undefined =>
	run?.followUps?.pending?.find((p) => p.runId === roundId);

type Gathered =
	| { kind: "wait" }
	| { kind: "drop"; reason: string }
	| { kind: "stuck"; failures: CiFailure[] }
	| { kind: "go"; input: RoundInput; signature?: string };

/** Text from GitHub for the prompt: bounded and redacted (it is untrusted data, never instructions). */
const clean = (text: string, max = MAX_FOLLOW_UP_TEXT) => headTail(redact(text), max);

/** What the round answers, read from GitHub now: the PR is open, its checks, its reviews. */
async function gather(
	deps: PipelineDeps,
	parent: Run,
	pending: PendingRound,
	repo: string,
	settings: FollowUpSettings,
): Promise<Gathered> {
	const pulls = deps.pulls();
	const pr = await pulls.state(pending.prUrl);
	if (!pr.open)
		return { kind: "drop", reason: `${pending.prUrl} is ${pr.merged ? "merged" : "closed"}` };
	const state = parent.followUps ?? emptyFollowUps();
	const input: RoundInput = {
		number: state.rounds.filter((r) => r.prUrl === pending.prUrl).length + 1,
		prUrl: pending.prUrl,
		repo,
		branch: pr.branch,
		headSha: pr.headSha,
	};
	let signature: string | undefined;
	const people = pending.reviewIds.length > 0 || pending.instructions.length > 0;

	if (pending.headSha) {
		if (pr.headSha !== pending.headSha && !people)
			return {
				kind: "drop",
				reason: `${pending.headSha.slice(0, 12)} is no longer the head of ${pending.prUrl} (now ${pr.headSha.slice(0, 12)}): its checks no longer matter`,
			};
		if (pr.headSha === pending.headSha) {
			const checks = await pulls.checks(pending.prUrl, pending.headSha);
			if (
				!checks.complete &&
				deps.now().getTime() - Date.parse(pending.firstAt) < MAX_CHECKS_WAIT_MS
			)
				return { kind: "wait" };
			const failures = checks.failures.map(cleanFailure);
			if (failures.length) {
				signature = failureSignature(failures);
				if (lastCiRound(state, pending.prUrl)?.signature === signature)
					return { kind: "stuck", failures };
				input.failures = failures;
			} else if (!people)
				return {
					kind: "drop",
					reason: `no check of ${pending.headSha.slice(0, 12)} fails any more`,
				};
		}
	}

	if (pending.reviewIds.length) {
		const found = await pulls.reviews(pending.prUrl, pending.reviewIds);
		const comments = found.comments.map((c) => ({
			...c,
			body: clean(c.body),
			...(c.diffHunk ? { diffHunk: tail(redact(c.diffHunk), 2000) } : {}),
		}));
		// A `commented` review counts for its inline comments; `changes_requested` for its body too.
		const reviews = found.reviews
			.filter(
				(r) =>
					r.state.toUpperCase() === "CHANGES_REQUESTED" ||
					(settings.review_comments && comments.length > 0),
			)
			.map((r) => ({ ...r, ...(r.body ? { body: clean(r.body) } : {}) }));
		if (reviews.length) {
			input.reviews = reviews;
			input.comments = comments;
		}
	}
	if (pending.instructions.length)
		input.instructions = pending.instructions.map((i) => ({ ...i, body: clean(i.body) }));

	if (!input.failures && !input.reviews && !input.instructions)
		return {
			kind: "drop",
			reason: "nothing is left to answer (no failing check, review comment or instruction)",
		};
	return { kind: "go", input: boundRoundInput(input), signature };
}

const cleanFailure = (f: CiFailure): CiFailure => ({
	...f,
	...(f.summary ? { summary: clean(f.summary) } : {}),
	annotations: f.annotations.slice(0, 20).map((a) => ({ ...a, message: clean(a.message, 1000) })),
	...(f.log ? { log: tail(redact(f.log), 3000) } : {}),
});

/** Creates the round's run (idempotent on the pending round's id), requests it, records it. */
async function startRound(
	deps: PipelineDeps,
	parent: Run,
	pending: PendingRound,
	input: RoundInput,
	signature?: string,
): Promise<void> {
	const now = deps.now().toISOString();
	const run: Run = {
		...newRun({
			runId: pending.runId,
			source: parent.source,
			issueId: parent.issueId,
			issueKey: parent.issueKey,
			trigger: pending.trigger,
			agentSessionId: parent.agentSessionId,
			now,
		}),
		parentRunId: parent.runId,
		round: input,
		// A round says one thing in the tracker, at its end: no start comment, no first thought.
		tracker: { acknowledged: true, startComment: true },
	};
	const label = `round ${input.number} (${triggerLabel(pending.trigger)})`;
	if (await deps.store.createRun(run))
		await note(
			deps,
			run.runId,
			"run.requested",
			`${label} on ${input.prUrl}, following run ${parent.runId}`,
			{
				data: { trigger: pending.trigger, parentRunId: parent.runId, prUrl: input.prUrl },
			},
		);
	await deps.queue.send(
		"intake",
		requestAgain(parent, {
			trigger: pending.trigger,
			requestedAt: now,
			runId: run.runId,
			...(parent.agentSessionId ? { agentSessionId: parent.agentSessionId } : {}),
		}),
	);
	const record: RoundRecord = {
		runId: run.runId,
		trigger: pending.trigger,
		prUrl: input.prUrl,
		...(pending.headSha ? { headSha: pending.headSha } : {}),
		...(signature ? { signature } : {}),
		...(pending.reviewIds.length ? { reviewIds: pending.reviewIds } : {}),
		...(pending.instructions.length
			? { instructionIds: pending.instructions.map((i) => i.id) }
			: {}),
		at: now,
	};
	const res = await settle(deps, parent.runId, pending, (s) => ({
		...s,
		rounds: [...s.rounds, record],
	}));
	if (res)
		await note(deps, parent.runId, "followup.round", `${label} started as run ${run.runId}`, {
			data: { roundRunId: run.runId, trigger: pending.trigger },
		});
}

/** Ends the pending round (if it is still this one) with `change` applied to the state. */
async function settle(
	deps: PipelineDeps,
	runId: string,
	pending: PendingRound,
	change: (s: FollowUpState) => FollowUpState,
): Promise<boolean> {
	const res = await mutate(deps, runId, (r) => {
		const state = r.followUps;
		if (!state || !pendingOf(r, pending.runId)) return {};
		const rest = (state.pending ?? []).filter((p) => p.runId !== pending.runId);
		return { patch: { set: { followUps: change({ ...state, pending: rest }) } } };
	});
	return res?.changed === true;
}

async function drop(
	deps: PipelineDeps,
	parent: Run,
	pending: PendingRound,
	reason: string,
): Promise<void> {
	if (await settle(deps, parent.runId, pending, (s) => s))
		await note(
			deps,
			parent.runId,
			"followup.dropped",
			`no ${triggerLabel(pending.trigger)} round: ${reason}`,
		);
}

/** The no-progress guard: the same checks fail the same way after a round: CI rounds stop, said once. */
async function stop(
	deps: PipelineDeps,
	parent: Run,
	pending: PendingRound,
	failures: CiFailure[],
): Promise<void> {
	const last = lastCiRound(parent.followUps ?? emptyFollowUps(), pending.prUrl);
	const reason = `${failures.map((f) => f.name).join(", ")} still fail${failures.length === 1 ? "s" : ""} the same way after round ${last?.runId ?? "?"}`;
	const at = deps.now().toISOString();
	if (!(await settle(deps, parent.runId, pending, (s) => ({ ...s, stopped: { reason, at } }))))
		return;
	await note(deps, parent.runId, "followup.stopped", `CI rounds stopped: ${reason}`, {
		data: { failing: failures.map((f) => f.name) },
	});
	await sayOnIssueAndPullRequests(
		deps,
		parent,
		[pending.prUrl],
		guardComment(parent, failures, deps.runUrl(parent.runId)),
	);
}
