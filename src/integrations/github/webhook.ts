import { createHmac, timingSafeEqual } from "node:crypto";
import type { Context } from "hono";
import {
	acceptDelivery,
	configOr503,
	type Delivery,
	deliveryKey,
	forwardDelivery,
	ignored,
	ownActorAnswer,
	selfActorOr503,
	tooOld,
	unusableIds,
} from "../../api/accept";
import { verifiedJson } from "../../api/body";
import type { ApiDeps } from "../../api/deps";
import { isRunId } from "../../domain/ids";
import { prUrls } from "../../domain/run";
import { gitHubIssuesRepo } from "../../domain/workflow";
import { followUpRequested, pullRequestClosed } from "../../queue/messages";
import { CHECK_EVENTS, type FollowUpVerdict, type GitHubWebhook, gitHubVerdict } from "./trigger";

/**
 * `X-Hub-Signature-256` is `sha256=` + hex HMAC-SHA256 of the body, checked over the raw bytes
 * with node:crypto (in constant time). Not octokit's verifier: it takes only a string, and a body
 * decoded to a string first lets bytes that are not UTF-8 (each read as U+FFFD) pass with a
 * signature made over other bytes.
 */
function gitHubSignatureValid(raw: Uint8Array, secret: string, header: string): boolean {
	const expected = Buffer.from(`sha256=${createHmac("sha256", secret).update(raw).digest("hex")}`);
	const given = Buffer.from(header);
	return given.length === expected.length && timingSafeEqual(given, expected);
}

/** When the event a payload reports happened, if it says: what a replay's age is judged by. */
function eventTime(event: string, payload: GitHubWebhook): string | undefined {
	switch (event) {
		case "issues":
			return payload.issue?.updated_at ?? undefined;
		case "pull_request":
			return payload.pull_request?.closed_at ?? payload.pull_request?.updated_at ?? undefined;
		case "issue_comment":
		case "pull_request_review_comment":
			return payload.comment?.updated_at ?? payload.comment?.created_at ?? undefined;
		case "pull_request_review":
			return payload.review?.submitted_at ?? undefined;
		case "check_suite":
		case "check_run":
		case "workflow_run": {
			const check = payload[event];
			return check?.completed_at ?? check?.updated_at ?? undefined;
		}
	}
	return undefined;
}

const HANDLED = [
	"issues",
	"issue_comment",
	"pull_request",
	"pull_request_review",
	"pull_request_review_comment",
	...CHECK_EVENTS,
];

/** A check suite lists every pull request whose head is the commit: a bounded few are looked up. */
const MAX_CANDIDATES = 10;

/**
 * `POST /webhooks/github`: `X-Hub-Signature-256` over the raw bytes; fails closed without a
 * secret; dedupes on the SHA-256 of the signed body (`X-GitHub-Delivery` is recorded, never
 * trusted: GitHub does not sign it) and refuses events older than the dedupe record lives. Handles
 * `issues` labeled (GitHub Issues as the source), `pull_request` closed on a Lisa PR (any source),
 * and on Lisa's open PRs failing checks, reviews and mentions: `followup.requested`
 * (docs/follow-ups.md › Follow-ups).
 */
export async function githubWebhook(c: Context, deps: ApiDeps): Promise<Response> {
	const raw = Buffer.from(await c.req.arrayBuffer());
	const secret = deps.settings.github.webhookSecret;
	if (!secret)
		return c.json({ error: "GITHUB_WEBHOOK_SECRET is not set: GitHub webhooks are refused" }, 401);
	const signature = c.req.header("x-hub-signature-256");
	if (!signature) return c.json({ error: "missing X-Hub-Signature-256 header" }, 401);
	if (!gitHubSignatureValid(raw, secret, signature))
		return c.json({ error: "signature does not match" }, 401);

	const body = verifiedJson<GitHubWebhook>(c, raw);
	if (!body.payload) return body.answer;
	const payload = body.payload;
	const event = c.req.header("x-github-event") ?? "";
	if (event === "ping") return ignored(c, "ping");
	// Answered without the config, so GitHub is never told to retry an event Lisa never wants.
	if (!HANDLED.includes(event)) return ignored(c, `${event || "unknown"} events are not handled`);
	const old = tooOld(c, eventTime(event, payload), deps.now());
	if (old) return old;
	const delivery: Delivery = {
		source: "github",
		key: deliveryKey(raw),
		id: c.req.header("x-github-delivery"),
	};

	const { config, answer } = configOr503(c, deps);
	if (!config) return answer;
	let lisaLogin: string | undefined;
	if (event === "issue_comment" || event === "pull_request_review_comment") {
		// Without credentials there is no login to be mentioned by; `/lisa` still mentions Lisa.
		const self = await selfActorOr503(c, deps, "github");
		if (self instanceof Response) return self;
		lisaLogin = self;
	}
	const verdict = gitHubVerdict(event, payload, {
		issues: config.source === "github",
		label: config.source_config.label,
		repo: gitHubIssuesRepo(config),
		lisaLogin,
		epic: config.epic,
	});
	if (verdict.kind === "ignore") return ignored(c, verdict.reason);
	if (verdict.kind === "followup") return followUp(c, deps, delivery, verdict);

	if (verdict.kind === "issue") {
		const own = await ownActorAnswer(c, deps, "github", verdict.actor);
		if (own) return own;
		return acceptDelivery(c, deps, delivery, {
			issueId: verdict.issueId,
			issueKey: verdict.issueId,
			...(verdict.runKind ? { kind: verdict.runKind } : {}),
		});
	}

	// A marker alone proves nothing (anyone can paste one): the PR must be one the run opened.
	if (!isRunId(verdict.runId)) return ignored(c, `run ${verdict.runId} does not exist`);
	const run = await deps.store.getRun(verdict.runId);
	if (!run) return ignored(c, `run ${verdict.runId} does not exist`);
	if (!prUrls(run).includes(verdict.prUrl))
		return ignored(c, `${verdict.prUrl} is not a pull request of run ${run.runId}`);
	return forwardDelivery(
		c,
		deps,
		delivery,
		pullRequestClosed({
			runId: run.runId,
			prUrl: verdict.prUrl,
			merged: verdict.merged,
			at: verdict.at ?? deps.now().toISOString(),
			by: verdict.by,
			mergeCommitSha: verdict.mergeCommitSha,
		}),
	);
}

/**
 * A round asked on a pull request: forwarded to the run that opened it, if the PR index names one
 * and the PR is still open. Who may drive Lisa (`author_association`, `follow_up.allow`) is the
 * pipeline's call: it notes a refused outsider on the run's timeline, so the association goes on.
 */
async function followUp(
	c: Context,
	deps: ApiDeps,
	delivery: Delivery,
	verdict: FollowUpVerdict,
): Promise<Response> {
	const own = await ownActorAnswer(c, deps, "github", verdict.author);
	if (own) return own;
	const candidates = verdict.prUrls.slice(0, MAX_CANDIDATES);
	// Store keys are made of them: a URL that no message could hold is refused before a lookup.
	const bad = unusableIds(
		c,
		Object.fromEntries(candidates.map((url, i) => [`pull request ${i + 1}`, url])),
	);
	if (bad) return bad;
	const reasons: string[] = [];
	for (const prUrl of candidates) {
		const runId = await deps.store.runOfPullRequest(prUrl);
		if (!runId) continue;
		const run = isRunId(runId) ? await deps.store.getRun(runId) : undefined;
		if (!run) {
			reasons.push(`run ${runId} of ${prUrl} does not exist`);
			continue;
		}
		if ((run.closedPullRequests ?? []).some((p) => p.url === prUrl)) {
			reasons.push(`${prUrl} is closed`);
			continue;
		}
		return forwardDelivery(
			c,
			deps,
			delivery,
			followUpRequested({
				runId: run.runId,
				trigger: verdict.trigger,
				prUrl,
				...(verdict.headSha ? { headSha: verdict.headSha } : {}),
				...(verdict.reviewId !== undefined ? { reviewId: verdict.reviewId } : {}),
				...(verdict.author ? { author: verdict.author } : {}),
				...(verdict.association ? { association: verdict.association } : {}),
				...(verdict.instruction ? { instruction: verdict.instruction } : {}),
				requestedAt: deps.now().toISOString(),
			}),
		);
	}
	return ignored(c, reasons.join("; ") || "not a pull request Lisa opened");
}
