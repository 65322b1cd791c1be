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
	tooOld,
} from "../../api/accept";
import { verifiedJson } from "../../api/body";
import type { ApiDeps } from "../../api/deps";
import { isRunId } from "../../domain/ids";
import { prUrls } from "../../domain/run";
import { gitHubIssuesRepo } from "../../domain/workflow";
import { pullRequestClosed } from "../../queue/messages";
import { type GitHubWebhook, gitHubVerdict } from "./trigger";

/**
 * `X-Hub-Signature-256` is `sha256=` + hex HMAC-SHA256 of the body, checked over the raw bytes
 * with node:crypto (in constant time). Not octokit's verifier: it takes only a string, and a body
 * decoded to a string first lets bytes that are not UTF-8 (each read as U+FFFD) pass with a
 * signature made over other bytes.
 */
export function gitHubSignatureValid(raw: Uint8Array, secret: string, header: string): boolean {
	const expected = Buffer.from(`sha256=${createHmac("sha256", secret).update(raw).digest("hex")}`);
	const given = Buffer.from(header);
	return given.length === expected.length && timingSafeEqual(given, expected);
}

/** When the event a payload reports happened, if it says: what a replay's age is judged by. */
function eventTime(event: string, payload: GitHubWebhook): string | undefined {
	if (event === "issues") return payload.issue?.updated_at ?? undefined;
	if (event === "pull_request")
		return payload.pull_request?.closed_at ?? payload.pull_request?.updated_at ?? undefined;
	return undefined;
}

/**
 * `POST /webhooks/github`: `X-Hub-Signature-256` over the raw bytes; fails closed without a
 * secret; dedupes on the SHA-256 of the signed body (`X-GitHub-Delivery` is recorded, never
 * trusted: GitHub does not sign it) and refuses events older than the dedupe record lives. Handles
 * `issues` labeled (GitHub Issues as the source) and `pull_request` closed on a Lisa PR (any source).
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
	if (!["issues", "issue_comment", "pull_request"].includes(event))
		return ignored(c, `${event || "unknown"} events are not handled`);
	const old = tooOld(c, eventTime(event, payload), deps.now());
	if (old) return old;
	const delivery: Delivery = {
		source: "github",
		key: deliveryKey(raw),
		id: c.req.header("x-github-delivery"),
	};

	const { config, answer } = configOr503(c, deps);
	if (!config) return answer;
	const verdict = gitHubVerdict(event, payload, {
		issues: config.source === "github",
		label: config.source_config.label,
		repo: gitHubIssuesRepo(config),
	});
	if (verdict.kind === "ignore") return ignored(c, verdict.reason);

	if (verdict.kind === "issue") {
		const own = await ownActorAnswer(c, deps, "github", verdict.actor);
		if (own) return own;
		return acceptDelivery(c, deps, delivery, {
			issueId: verdict.issueId,
			issueKey: verdict.issueId,
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
