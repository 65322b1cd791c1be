// Hono routes of the GitHub REST double: auth, fault injection, request log and the endpoints.
import { type Context, Hono } from "hono";
import { type AppIdentity, allows, type InstallationTokens, verifyAppJwt } from "./app-auth";
import {
	ACTIONS_APP,
	branchSha,
	type CheckRunRec,
	type CommitChecksRec,
	commitOf,
	commitsBetween,
	DOCS,
	type DoubleState,
	type IssueRec,
	now,
	type PullRec,
	type RepoRec,
	type ReviewState,
	readDefaultBranch,
} from "./state";

export interface RecordedRequest {
	method: string;
	/** Path without the query string, e.g. /repos/acme/app/pulls */
	path: string;
	query: Record<string, string>;
	/** Parsed JSON body (raw text when it is not JSON, undefined when empty). */
	body: unknown;
	/** Lower-cased request headers without `authorization`. */
	headers: Record<string, string>;
	/** Response status, set once the double has answered. */
	status?: number;
}

export interface UnhandledRequest {
	method: string;
	path: string;
}

export interface FailSpec {
	status: number;
	/** Defaults to `{ message: <status text>, documentation_url }`. */
	body?: unknown;
	/** Override or add response headers (e.g. `retry-after`, `x-ratelimit-remaining: "0"`). */
	headers?: Record<string, string>;
	/** Handle the request for real first, then answer with the failure instead. */
	afterHandling?: boolean;
}

export interface RouteContext {
	state: DoubleState;
	/** The personal token: every repository, every permission. */
	token: string;
	/** The GitHub App installed on the double's repositories, when a test gives one. */
	app?: AppIdentity;
	tokens: InstallationTokens;
	requests: RecordedRequest[];
	unhandled: UnhandledRequest[];
	failures: FailSpec[];
}

type Env = { Variables: { body: unknown } };
type C = Context<Env>;
type Obj = Record<string, unknown>;

const RATE_LIMIT = 5000;
const R = "/repos/:owner/:repo";
const N = ":number{[0-9]+}";
const DOC_CREATE_PR = `${DOCS}/pulls/pulls#create-a-pull-request`;
const DOC_REMOVE_LABEL = `${DOCS}/issues/labels#remove-a-label-from-an-issue`;
const DOC_CHECK_RUNS = `${DOCS}/checks/runs#list-check-runs-for-a-git-reference`;
const DOC_REVIEWERS = `${DOCS}/pulls/review-requests#request-reviewers-for-a-pull-request`;
const DOC_REVIEWS = `${DOCS}/pulls/reviews#create-a-review-for-a-pull-request`;
const DOC_REPLY = `${DOCS}/pulls/comments#create-a-reply-for-a-review-comment`;
/** Where the signed log URLs point: served without a token, like GitHub's blob storage. */
const BLOBS = "/_blobs/";
const ID = "{[0-9]+}";

const STATUS_TEXT: Record<number, string> = {
	400: "Bad Request",
	403: "Forbidden",
	404: "Not Found",
	429: "Too Many Requests",
	500: "Server Error",
	502: "Bad Gateway",
	503: "Service Unavailable",
	504: "Gateway Timeout",
};

export function createApp(ctx: RouteContext): Hono<Env> {
	const { state } = ctx;
	let used = 0;
	const resetAt = Math.floor(Date.now() / 1000) + 3600;

	const send = (status: number, body: unknown, headers: Record<string, string> = {}): Response => {
		used++;
		return new Response(body === undefined ? null : JSON.stringify(body), {
			status,
			headers: {
				...(body === undefined ? {} : { "content-type": "application/json; charset=utf-8" }),
				"x-github-api-version-selected": "2022-11-28",
				"x-github-media-type": "github.v3; format=json",
				"x-github-request-id": `D0B1:${used.toString(16).toUpperCase()}`,
				"x-ratelimit-limit": String(RATE_LIMIT),
				"x-ratelimit-remaining": String(Math.max(1, RATE_LIMIT - used)),
				"x-ratelimit-reset": String(resetAt),
				"x-ratelimit-used": String(used),
				"x-ratelimit-resource": "core",
				...headers,
			},
		});
	};
	const fail = (status: number, message: string, doc = DOCS, extra: Obj = {}): Response =>
		send(status, { message, ...extra, documentation_url: doc, status: String(status) });
	const notFound = () => fail(404, "Not Found");
	const invalid = (errors: Obj[], doc = DOCS) => fail(422, "Validation Failed", doc, { errors });

	const body = (c: C): Obj => {
		const b = c.get("body");
		return b !== null && typeof b === "object" && !Array.isArray(b) ? (b as Obj) : {};
	};
	const repoOf = (c: C): RepoRec | undefined =>
		state.repo(c.req.param("owner") ?? "", c.req.param("repo") ?? "");
	const issueOf = (c: C, repo: RepoRec): IssueRec | undefined =>
		repo.issues.get(Number(c.req.param("number")));

	const paginate = <T>(c: C, items: T[]): { page: T[]; headers: Record<string, string> } => {
		const perPage = Math.min(100, Math.max(1, Number(c.req.query("per_page")) || 30));
		const page = Math.max(1, Number(c.req.query("page")) || 1);
		const last = Math.max(1, Math.ceil(items.length / perPage));
		const link = (p: number, rel: string) => {
			const u = new URL(c.req.url);
			u.searchParams.set("page", String(p));
			return `<${state.apiBase}${u.pathname}${u.search}>; rel="${rel}"`;
		};
		const links: string[] = [];
		if (page > 1) links.push(link(Math.min(page - 1, last), "prev"));
		if (page < last) links.push(link(page + 1, "next"), link(last, "last"));
		if (page > 1) links.push(link(1, "first"));
		return {
			page: items.slice((page - 1) * perPage, page * perPage),
			headers: links.length > 0 ? { link: links.join(", ") } : {},
		};
	};

	const app = new Hono<Env>();

	app.use("*", async (c, next) => {
		const url = new URL(c.req.url);
		const headers: Record<string, string> = {};
		c.req.raw.headers.forEach((value, name) => {
			if (name !== "authorization") headers[name] = value;
		});
		const text = c.req.method === "GET" || c.req.method === "HEAD" ? "" : await c.req.text();
		let parsed: unknown;
		let badJson = false;
		if (text.trim() !== "") {
			try {
				parsed = JSON.parse(text);
			} catch {
				parsed = text;
				badJson = true;
			}
		}
		const rec: RecordedRequest = {
			method: c.req.method,
			path: url.pathname,
			query: c.req.query(),
			body: parsed,
			headers,
		};
		ctx.requests.push(rec);
		c.set("body", parsed ?? {});

		const failure = ctx.failures.shift();
		const failed = (f: FailSpec) =>
			send(
				f.status,
				f.body ?? { message: STATUS_TEXT[f.status] ?? "Error", documentation_url: DOCS },
				{ ...f.headers },
			);
		const auth = /^(?:token|bearer)\s+(\S+)\s*$/i.exec(c.req.header("authorization") ?? "");
		const denied = url.pathname.startsWith(BLOBS)
			? undefined
			: refusal(auth?.[1], c.req.method, url.pathname);
		if (failure && !failure.afterHandling) {
			c.res = failed(failure);
		} else if (denied) {
			c.res = denied;
		} else if (badJson) {
			c.res = fail(400, "Problems parsing JSON");
		} else {
			await next();
			// The request took effect, but the client only sees the failure (e.g. a 502 after GitHub
			// created the PR) — what a retried non-idempotent write runs into in production.
			if (failure) c.res = failed(failure);
		}
		rec.status = c.res.status;
	});

	/**
	 * Why a request is refused, by its token, as GitHub refuses it: no token or an unknown or
	 * expired one (401); the App's JWT anywhere but the App's own routes (401); an installation
	 * token on a repository outside its list (404, as if it did not exist) or without the
	 * permission the route needs (403).
	 */
	function refusal(token: string | undefined, method: string, path: string): Response | undefined {
		if (token && token === ctx.token) return undefined;
		const appRoute =
			/^\/app(\/installations\/\d+\/access_tokens)?$|^\/repos\/[^/]+\/[^/]+\/installation$/.test(
				path,
			);
		if (token && ctx.app && verifyAppJwt(token, ctx.app))
			return appRoute ? undefined : fail(401, "A JSON web token could not be decoded");
		const scope = token ? ctx.tokens.scopeOf(token) : undefined;
		if (!scope || appRoute) return fail(401, "Bad credentials");
		const repo = /^\/repos\/([^/]+\/[^/]+)(\/.*)?$/.exec(path);
		if (!repo) return undefined;
		if (scope.repos && !scope.repos.has((repo[1] ?? "").toLowerCase())) return notFound();
		return allows(scope, repo[1] ?? "", method, repo[2] ?? "")
			? undefined
			: fail(403, "Resource not accessible by integration");
	}

	// ---------------------------------------------------------------- the App's own routes

	const appJson = (a: AppIdentity) => ({
		id: a.id,
		slug: a.slug,
		name: a.slug,
		owner: state.user(state.login),
		permissions: a.installation.permissions,
		events: ["issues", "issue_comment", "pull_request", "check_suite"],
	});
	app.get("/app", () => (ctx.app ? send(200, appJson(ctx.app)) : notFound()));
	app.get(`${R}/installation`, (c) => {
		const a = ctx.app;
		const name = `${c.req.param("owner")}/${c.req.param("repo")}`.toLowerCase();
		if (!a?.installation.repos.some((r) => r.toLowerCase() === name)) return notFound();
		return send(200, {
			id: a.installation.id,
			app_id: a.id,
			app_slug: a.slug,
			account: state.user(c.req.param("owner") ?? ""),
			repository_selection: "selected",
			permissions: a.installation.permissions,
			target_type: "Organization",
		});
	});
	app.post(`/app/installations/:id${ID}/access_tokens`, (c) => {
		const a = ctx.app;
		if (!a || Number(c.req.param("id")) !== a.installation.id) return notFound();
		const b = body(c);
		const minted = ctx.tokens.mint(a, {
			...(Array.isArray(b.repositories) ? { repositories: b.repositories.map(String) } : {}),
			...(b.permissions && typeof b.permissions === "object"
				? { permissions: b.permissions as Record<string, "read" | "write"> }
				: {}),
		});
		if ("error" in minted) return fail(422, minted.error);
		const repos = [...(minted.scope.repos ?? [])].flatMap((r) => {
			const rec = state.repo(...(r.split("/") as [string, string]));
			return rec ? [state.repoJson(rec)] : [];
		});
		return send(201, {
			token: minted.token,
			expires_at: new Date(minted.scope.expiresAt).toISOString().replace(/\.\d{3}Z$/, "Z"),
			permissions: minted.scope.permissions,
			repository_selection: "selected",
			repositories: repos,
		});
	});

	app.notFound((c) => {
		ctx.unhandled.push({ method: c.req.method, path: new URL(c.req.url).pathname });
		return notFound();
	});

	app.onError((err) => fail(500, `GitHub double error: ${err.message}`));

	// ---------------------------------------------------------------- user & repo

	app.get("/user", () => send(200, { ...state.user(state.login), name: null, email: null }));

	app.get(R, async (c) => {
		const repo = repoOf(c);
		if (!repo) return notFound();
		repo.defaultBranch = await readDefaultBranch(repo.gitDir);
		return send(200, state.repoJson(repo));
	});

	// ---------------------------------------------------------------- pull requests

	const openDuplicate = (repo: RepoRec, head: string, base: string, self?: IssueRec) =>
		[...repo.issues.values()].find(
			(i) =>
				i !== self && i.state === "open" && i.pull?.headRef === head && i.pull.baseRef === base,
		);
	const alreadyExists = (repo: RepoRec, head: string) =>
		invalid(
			[
				{
					resource: "PullRequest",
					code: "custom",
					message: `A pull request already exists for ${repo.owner}:${head}.`,
				},
			],
			DOC_CREATE_PR,
		);

	app.post(`${R}/pulls`, async (c) => {
		const repo = repoOf(c);
		if (!repo) return notFound();
		const b = body(c);
		const title = typeof b.title === "string" ? b.title : undefined;
		const head = typeof b.head === "string" ? b.head : undefined;
		const base = typeof b.base === "string" ? b.base : undefined;
		const missing = (["head", "base", "title"] as const)
			.filter((f) => !{ head, base, title }[f])
			.map((field) => ({ resource: "PullRequest", code: "missing_field", field }));
		if (!head || !base || !title) return invalid(missing, DOC_CREATE_PR);

		const colon = head.indexOf(":");
		const headOwner = colon >= 0 ? head.slice(0, colon) : repo.owner;
		const headRef = colon >= 0 ? head.slice(colon + 1) : head;
		const sameOwner = headOwner.toLowerCase() === repo.owner.toLowerCase();
		const [headSha, baseSha] = await Promise.all([
			sameOwner ? branchSha(repo.gitDir, headRef) : undefined,
			branchSha(repo.gitDir, base),
		]);
		const errors: Obj[] = [];
		if (!headSha) errors.push({ resource: "PullRequest", field: "head", code: "invalid" });
		if (!baseSha) errors.push({ resource: "PullRequest", field: "base", code: "invalid" });
		if (!headSha || !baseSha) return invalid(errors, DOC_CREATE_PR);

		if (openDuplicate(repo, headRef, base)) return alreadyExists(repo, headRef);
		const commits = await commitsBetween(repo.gitDir, baseSha, headSha);
		if (commits === 0) {
			const message = `No commits between ${base} and ${headRef}`;
			return invalid([{ resource: "PullRequest", code: "custom", message }], DOC_CREATE_PR);
		}

		const issue = state.newIssue(repo, {
			title,
			body: typeof b.body === "string" ? b.body : null,
		});
		issue.pull = {
			id: state.id(),
			headRef,
			headSha,
			baseRef: base,
			baseSha,
			draft: b.draft === true,
			merged: false,
			mergedAt: null,
			mergedBy: null,
			mergeCommitSha: null,
			maintainerCanModify: b.maintainer_can_modify !== false,
			commits,
			requestedReviewers: [],
			reviews: [],
			reviewComments: [],
		};
		const json = state.pullJson(repo, issue, true);
		return send(201, json, { location: json.url });
	});

	app.get(`${R}/pulls`, async (c) => {
		const repo = repoOf(c);
		if (!repo) return notFound();
		const q = c.req.query();
		const wanted = q.state ?? "open";
		// GitHub only honours `head` in the "owner:branch" form; a bare branch is silently ignored.
		const headFilter = q.head?.includes(":") ? q.head : undefined;
		const pulls = [...repo.issues.values()].filter((i) => {
			if (!i.pull) return false;
			if (wanted !== "all" && i.state !== wanted) return false;
			if (q.base !== undefined && i.pull.baseRef !== q.base) return false;
			if (headFilter !== undefined) {
				const [owner, ...ref] = headFilter.split(":");
				if (owner?.toLowerCase() !== repo.owner.toLowerCase()) return false;
				if (i.pull.headRef !== ref.join(":")) return false;
			}
			return true;
		});
		const sort = q.sort ?? "created";
		const dir = (q.direction ?? (sort === "created" ? "desc" : "asc")) === "asc" ? 1 : -1;
		const key = (i: IssueRec): string | number =>
			sort === "updated"
				? i.updatedAt
				: sort === "popularity"
					? i.comments.length
					: sort === "long-running"
						? -Date.parse(i.createdAt)
						: i.createdAt;
		const { page, headers } = paginate(c, sortBy(pulls, key, dir));
		await Promise.all(page.map((i) => state.refreshPull(repo, i)));
		return send(
			200,
			page.map((i) => state.pullJson(repo, i, false)),
			headers,
		);
	});

	app.get(`${R}/pulls/${N}`, async (c) => {
		const repo = repoOf(c);
		const issue = repo && issueOf(c, repo);
		if (!repo || !issue?.pull) return notFound();
		await state.refreshPull(repo, issue);
		return send(200, state.pullJson(repo, issue, true));
	});

	app.patch(`${R}/pulls/${N}`, async (c) => {
		const repo = repoOf(c);
		const issue = repo && issueOf(c, repo);
		const pull = issue?.pull;
		if (!repo || !issue || !pull) return notFound();
		const b = body(c);
		if (b.state !== undefined && b.state !== "open" && b.state !== "closed") {
			return invalid([{ resource: "PullRequest", code: "invalid", field: "state" }]);
		}
		if (b.base !== undefined) {
			const sha = typeof b.base === "string" ? await branchSha(repo.gitDir, b.base) : undefined;
			if (!sha) return invalid([{ resource: "PullRequest", code: "invalid", field: "base" }]);
		}
		const base = typeof b.base === "string" ? b.base : pull.baseRef;
		const reopening = b.state === "open" && issue.state === "closed";
		const staysOpen = issue.state === "open" && b.state !== "closed";
		if (staysOpen && base !== pull.baseRef && openDuplicate(repo, pull.headRef, base, issue)) {
			return alreadyExists(repo, pull.headRef);
		}
		if (reopening) {
			const stateError = (message: string) =>
				invalid([{ resource: "PullRequest", code: "custom", field: "state", message }]);
			if (pull.merged) return stateError("state cannot be changed. The pull request is merged.");
			if (!(await branchSha(repo.gitDir, pull.headRef))) {
				return stateError(`state cannot be changed. The ${pull.headRef} branch has been deleted.`);
			}
			if (openDuplicate(repo, pull.headRef, base, issue)) return alreadyExists(repo, pull.headRef);
		}
		if (typeof b.title === "string") issue.title = b.title;
		if (typeof b.body === "string" || b.body === null) issue.body = b.body;
		if (typeof b.maintainer_can_modify === "boolean")
			pull.maintainerCanModify = b.maintainer_can_modify;
		pull.baseRef = base;
		if (b.state === "open" || b.state === "closed") state.setState(issue, b.state, state.login);
		issue.updatedAt = now();
		await state.refreshPull(repo, issue);
		return send(200, state.pullJson(repo, issue, true));
	});

	// ---------------------------------------------------------------- reviews and review comments

	const pullOf = (c: C): { repo: RepoRec; issue: IssueRec; pull: PullRec } | undefined => {
		const repo = repoOf(c);
		const issue = repo && issueOf(c, repo);
		return repo && issue?.pull ? { repo, issue, pull: issue.pull } : undefined;
	};
	const idParam = (c: C, name: string) => Number(c.req.param(name));

	app.get(`${R}/pulls/${N}/reviews`, (c) => {
		const found = pullOf(c);
		if (!found) return notFound();
		const { repo, issue, pull } = found;
		// Someone else's pending review is invisible.
		const visible = pull.reviews.filter((r) => r.state !== "PENDING" || r.user === state.login);
		const { page, headers } = paginate(c, visible);
		return send(
			200,
			page.map((r) => state.reviewJson(repo, issue, r)),
			headers,
		);
	});

	app.get(`${R}/pulls/${N}/reviews/:review_id${ID}`, (c) => {
		const found = pullOf(c);
		const review = found?.pull.reviews.find((r) => r.id === idParam(c, "review_id"));
		if (!found || !review) return notFound();
		return send(200, state.reviewJson(found.repo, found.issue, review));
	});

	app.get(`${R}/pulls/${N}/reviews/:review_id${ID}/comments`, (c) => {
		const found = pullOf(c);
		const id = idParam(c, "review_id");
		if (!found?.pull.reviews.some((r) => r.id === id)) return notFound();
		const { repo, issue, pull } = found;
		const { page, headers } = paginate(
			c,
			pull.reviewComments.filter((cm) => cm.reviewId === id),
		);
		return send(
			200,
			page.map((cm) => state.reviewCommentJson(repo, issue, cm)),
			headers,
		);
	});

	app.post(`${R}/pulls/${N}/reviews`, (c) => {
		const found = pullOf(c);
		if (!found) return notFound();
		const { repo, issue } = found;
		const b = body(c);
		const events: Record<string, ReviewState> = {
			APPROVE: "APPROVED",
			REQUEST_CHANGES: "CHANGES_REQUESTED",
			COMMENT: "COMMENTED",
		};
		const event = typeof b.event === "string" ? b.event : undefined;
		const reviewState = event === undefined ? "PENDING" : events[event];
		if (!reviewState)
			return invalid(
				[{ resource: "PullRequestReview", code: "invalid", field: "event" }],
				DOC_REVIEWS,
			);
		const comments = Array.isArray(b.comments) ? (b.comments as Obj[]) : [];
		const text = typeof b.body === "string" ? b.body : "";
		const own = issue.user.toLowerCase() === state.login.toLowerCase();
		const unprocessable = (message: string) =>
			fail(422, "Unprocessable Entity", DOC_REVIEWS, { errors: [message] });
		if (own && reviewState === "APPROVED")
			return unprocessable("Can not approve your own pull request");
		if (own && reviewState === "CHANGES_REQUESTED")
			return unprocessable("Can not request changes on your own pull request");
		if (
			(reviewState === "CHANGES_REQUESTED" || reviewState === "COMMENTED") &&
			!text &&
			comments.length === 0
		)
			return unprocessable(`Body is required when using ${event}`);
		const specs = [];
		for (const cm of comments) {
			if (typeof cm.path !== "string" || typeof cm.body !== "string" || typeof cm.line !== "number")
				return invalid(
					[{ resource: "PullRequestReviewComment", code: "missing_field" }],
					DOC_REVIEWS,
				);
			specs.push({
				path: cm.path,
				line: cm.line,
				body: cm.body,
				...(cm.side === "LEFT" ? { side: "LEFT" as const } : {}),
			});
		}
		const { review } = state.addReview(repo, issue, {
			user: state.login,
			state: reviewState,
			body: text,
			comments: specs,
		});
		return send(200, state.reviewJson(repo, issue, review));
	});

	app.get(`${R}/pulls/${N}/comments`, (c) => {
		const found = pullOf(c);
		if (!found) return notFound();
		const { repo, issue, pull } = found;
		const pending = new Set(
			pull.reviews.filter((r) => r.state === "PENDING" && r.user !== state.login).map((r) => r.id),
		);
		const { page, headers } = paginate(
			c,
			pull.reviewComments.filter((cm) => !pending.has(cm.reviewId)),
		);
		return send(
			200,
			page.map((cm) => state.reviewCommentJson(repo, issue, cm)),
			headers,
		);
	});

	app.get(`${R}/pulls/comments/:comment_id${ID}`, (c) => {
		const repo = repoOf(c);
		if (!repo) return notFound();
		const id = idParam(c, "comment_id");
		for (const issue of repo.issues.values()) {
			const comment = issue.pull?.reviewComments.find((cm) => cm.id === id);
			if (comment) return send(200, state.reviewCommentJson(repo, issue, comment));
		}
		return notFound();
	});

	app.post(`${R}/pulls/${N}/comments/:comment_id${ID}/replies`, (c) => {
		const found = pullOf(c);
		const root = found && state.threadRoot(found.pull, idParam(c, "comment_id"));
		if (!found || !root) return notFound();
		const b = body(c);
		if (typeof b.body !== "string" || b.body === "")
			return invalid(
				[{ resource: "PullRequestReviewComment", code: "missing_field", field: "body" }],
				DOC_REPLY,
			);
		// A reply is a one-comment COMMENTED review of its own, as on GitHub.
		const { comments } = state.addReview(found.repo, found.issue, {
			user: state.login,
			state: "COMMENTED",
			comments: [{ body: b.body, in_reply_to: root.id }],
		});
		const json = state.reviewCommentJson(
			found.repo,
			found.issue,
			comments[0] as (typeof comments)[number],
		);
		return send(201, json, { location: json.url });
	});

	// ---------------------------------------------------------------- review requests

	const requested = (pull: PullRec) => ({
		users: pull.requestedReviewers.map((r) => state.user(r)),
		teams: [],
	});

	app.get(`${R}/pulls/${N}/requested_reviewers`, (c) => {
		const found = pullOf(c);
		if (!found) return notFound();
		return send(200, requested(found.pull));
	});

	app.post(`${R}/pulls/${N}/requested_reviewers`, (c) => {
		const found = pullOf(c);
		if (!found) return notFound();
		const { repo, issue, pull } = found;
		const reviewers = stringList(body(c).reviewers);
		if (reviewers.some((r) => r.toLowerCase() === issue.user.toLowerCase()))
			return invalid(
				[
					{
						resource: "ReviewRequest",
						code: "custom",
						field: "user_id",
						message: "Review cannot be requested from pull request author.",
					},
				],
				DOC_REVIEWERS,
			);
		if (reviewers.some((r) => state.association(repo, r) === "NONE"))
			return fail(
				422,
				`Reviews may only be requested from collaborators. One or more of the users or teams you specified is not a collaborator of the ${repo.fullName} repository.`,
				DOC_REVIEWERS,
			);
		for (const r of reviewers)
			if (!pull.requestedReviewers.some((x) => x.toLowerCase() === r.toLowerCase()))
				pull.requestedReviewers.push(r);
		issue.updatedAt = now();
		return send(201, state.pullJson(repo, issue, false));
	});

	app.get(`${R}/collaborators/:username`, (c) => {
		const repo = repoOf(c);
		if (!repo) return notFound();
		return state.association(repo, c.req.param("username") ?? "") === "NONE"
			? notFound()
			: send(204, undefined);
	});

	// ---------------------------------------------------------------- checks

	/** The checks of a ref (SHA, branch or tag); a ref that names no commit is GitHub's 422. */
	const checksOf = async (c: C): Promise<{ repo: RepoRec; checks: CommitChecksRec } | Response> => {
		const repo = repoOf(c);
		if (!repo) return notFound();
		const ref = c.req.param("ref") ?? "";
		const sha = await commitOf(repo.gitDir, ref);
		const checks = repo.checks.get(sha ?? ref);
		if (!sha && !checks) return fail(422, `No commit found for SHA: ${ref}`, DOC_CHECK_RUNS);
		return { repo, checks: checks ?? { suites: [], runs: [] } };
	};
	const appFilter = (c: C) => {
		const appId = c.req.query("app_id");
		return (slug: string) => appId === undefined || String(state.appJson(slug).id) === appId;
	};
	const runFilter = (c: C) => {
		const name = c.req.query("check_name");
		const status = c.req.query("status");
		const app = appFilter(c);
		return (r: CheckRunRec) =>
			(name === undefined || r.name === name) &&
			(status === undefined || r.status === status) &&
			app(r.app);
	};

	app.get(`${R}/commits/:ref/check-suites`, async (c) => {
		const found = await checksOf(c);
		if (found instanceof Response) return found;
		const { repo, checks } = found;
		const name = c.req.query("check_name");
		const app = appFilter(c);
		const suites = checks.suites.filter(
			(s) =>
				app(s.app) && (name === undefined || state.runsOf(repo, s).some((r) => r.name === name)),
		);
		const { page, headers } = paginate(c, suites);
		return send(
			200,
			{ total_count: suites.length, check_suites: page.map((s) => state.suiteJson(repo, s)) },
			headers,
		);
	});

	app.get(`${R}/commits/:ref/check-runs`, async (c) => {
		const found = await checksOf(c);
		if (found instanceof Response) return found;
		const { repo, checks } = found;
		const runs = checks.runs.filter(runFilter(c));
		const { page, headers } = paginate(c, runs);
		return send(
			200,
			{ total_count: runs.length, check_runs: page.map((r) => state.runJson(repo, r)) },
			headers,
		);
	});

	app.get(`${R}/check-suites/:id${ID}`, (c) => {
		const repo = repoOf(c);
		const suite = repo && state.findSuite(repo, (s) => s.id === idParam(c, "id"));
		if (!repo || !suite) return notFound();
		return send(200, state.suiteJson(repo, suite));
	});

	app.get(`${R}/check-suites/:id${ID}/check-runs`, (c) => {
		const repo = repoOf(c);
		const suite = repo && state.findSuite(repo, (s) => s.id === idParam(c, "id"));
		if (!repo || !suite) return notFound();
		const runs = state.runsOf(repo, suite).filter(runFilter(c));
		const { page, headers } = paginate(c, runs);
		return send(
			200,
			{ total_count: runs.length, check_runs: page.map((r) => state.runJson(repo, r)) },
			headers,
		);
	});

	app.get(`${R}/check-runs/:id${ID}`, (c) => {
		const repo = repoOf(c);
		const run = repo && state.findRun(repo, idParam(c, "id"));
		if (!repo || !run) return notFound();
		return send(200, state.runJson(repo, run));
	});

	app.get(`${R}/check-runs/:id${ID}/annotations`, (c) => {
		const repo = repoOf(c);
		const run = repo && state.findRun(repo, idParam(c, "id"));
		if (!repo || !run) return notFound();
		const { page, headers } = paginate(c, run.annotations);
		return send(
			200,
			page.map((a) => state.annotationJson(repo, run, a)),
			headers,
		);
	});

	// ---------------------------------------------------------------- Actions

	const workflowRunOf = (c: C) => {
		const repo = repoOf(c);
		const id = idParam(c, "run_id");
		const suite = repo && state.findSuite(repo, (s) => s.workflowRunId === id);
		return repo && suite ? { repo, suite } : undefined;
	};
	/** An Actions job: a check run of the github-actions app, under the same id. */
	const jobOf = (c: C) => {
		const repo = repoOf(c);
		const run = repo && state.findRun(repo, idParam(c, "job_id"));
		const suite = repo && run && state.findSuite(repo, (s) => s.id === run.suiteId);
		return repo && run && suite && run.app === ACTIONS_APP ? { repo, run, suite } : undefined;
	};

	app.get(`${R}/actions/runs/:run_id${ID}`, (c) => {
		const found = workflowRunOf(c);
		if (!found) return notFound();
		return send(200, state.workflowRunJson(found.repo, found.suite));
	});

	app.get(`${R}/actions/runs/:run_id${ID}/jobs`, (c) => {
		const found = workflowRunOf(c);
		if (!found) return notFound();
		const { repo, suite } = found;
		const jobs = state.runsOf(repo, suite);
		const { page, headers } = paginate(c, jobs);
		return send(
			200,
			{ total_count: jobs.length, jobs: page.map((r) => state.jobJson(repo, r, suite)) },
			headers,
		);
	});

	app.get(`${R}/actions/jobs/:job_id${ID}`, (c) => {
		const found = jobOf(c);
		if (!found) return notFound();
		return send(200, state.jobJson(found.repo, found.run, found.suite));
	});

	// GitHub answers with a redirect to a short-lived blob URL; fetch follows it (docs: "Download
	// job logs for a workflow run"). A job whose log is gone (expired, never finalised) is a 404.
	app.get(`${R}/actions/jobs/:job_id${ID}/logs`, (c) => {
		const found = jobOf(c);
		if (!found || found.run.log === undefined) return notFound();
		return send(302, undefined, { location: state.logUrl(found.repo, found.run) });
	});

	app.get(`${BLOBS}actions-results/:repo_id${ID}/jobs/:job_id${ID}/logs.txt`, (c) => {
		const path = new URL(c.req.url).pathname;
		const repo = [...state.repos.values()].find((r) => r.id === idParam(c, "repo_id"));
		const run = repo && state.findRun(repo, idParam(c, "job_id"));
		if (c.req.query("sig") !== state.sign(path) || run?.log === undefined)
			return new Response("AuthenticationFailed: Server failed to authenticate the request.", {
				status: 403,
				headers: { "content-type": "text/plain" },
			});
		return new Response(run.log, {
			status: 200,
			headers: { "content-type": "text/plain; charset=utf-8" },
		});
	});

	// ---------------------------------------------------------------- issues

	app.get(`${R}/issues`, (c) => {
		const repo = repoOf(c);
		if (!repo) return notFound();
		const q = c.req.query();
		const wanted = q.state ?? "open";
		const labels = (q.labels ?? "")
			.split(",")
			.map((l) => l.trim().toLowerCase())
			.filter(Boolean);
		const issues = [...repo.issues.values()].filter((i) => {
			if (wanted !== "all" && i.state !== wanted) return false;
			const have = i.labels.map((l) => l.toLowerCase());
			if (!labels.every((l) => have.includes(l))) return false;
			if (q.creator !== undefined && i.user.toLowerCase() !== q.creator.toLowerCase()) return false;
			if (q.since !== undefined && Date.parse(i.updatedAt) < Date.parse(q.since)) return false;
			if (q.assignee === "none" && i.assignees.length > 0) return false;
			if (q.assignee === "*" && i.assignees.length === 0) return false;
			if (q.assignee && q.assignee !== "none" && q.assignee !== "*") {
				if (!i.assignees.includes(q.assignee)) return false;
			}
			return true;
		});
		const sort = q.sort ?? "created";
		const dir = (q.direction ?? "desc") === "asc" ? 1 : -1;
		const key = (i: IssueRec): string | number =>
			sort === "updated" ? i.updatedAt : sort === "comments" ? i.comments.length : i.createdAt;
		const { page, headers } = paginate(c, sortBy(issues, key, dir));
		return send(
			200,
			page.map((i) => state.issueJson(repo, i)),
			headers,
		);
	});

	app.post(`${R}/issues`, (c) => {
		const repo = repoOf(c);
		if (!repo) return notFound();
		const b = body(c);
		if (typeof b.title !== "string" || b.title === "") {
			return invalid([{ resource: "Issue", code: "missing_field", field: "title" }]);
		}
		const issue = state.newIssue(repo, {
			title: b.title,
			body: typeof b.body === "string" ? b.body : null,
			labels: labelNames(b.labels) ?? [],
		});
		issue.assignees = stringList(b.assignees);
		const json = state.issueJson(repo, issue, true);
		return send(201, json, { location: json.url });
	});

	app.get(`${R}/issues/${N}`, (c) => {
		const repo = repoOf(c);
		const issue = repo && issueOf(c, repo);
		if (!repo || !issue) return notFound();
		return send(200, state.issueJson(repo, issue, true));
	});

	app.patch(`${R}/issues/${N}`, (c) => {
		const repo = repoOf(c);
		const issue = repo && issueOf(c, repo);
		if (!repo || !issue) return notFound();
		const b = body(c);
		if (b.state !== undefined && b.state !== "open" && b.state !== "closed") {
			return invalid([{ resource: "Issue", code: "invalid", field: "state" }]);
		}
		if (b.state === "open" && issue.pull?.merged) {
			const message = "state cannot be changed. The pull request is merged.";
			return invalid([{ resource: "PullRequest", code: "custom", field: "state", message }]);
		}
		if (typeof b.title === "string") issue.title = b.title;
		if (typeof b.body === "string" || b.body === null) issue.body = b.body;
		const labels = labelNames(b.labels);
		if (labels) issue.labels = dedupe(labels.map((l) => state.ensureLabel(repo, l).name));
		if (b.assignees !== undefined) issue.assignees = stringList(b.assignees);
		if (b.state === "open" || b.state === "closed") {
			const reason = typeof b.state_reason === "string" ? b.state_reason : undefined;
			state.setState(issue, b.state, state.login, reason);
		}
		issue.updatedAt = now();
		return send(200, state.issueJson(repo, issue, true));
	});

	app.get(`${R}/issues/${N}/comments`, (c) => {
		const repo = repoOf(c);
		const issue = repo && issueOf(c, repo);
		if (!repo || !issue) return notFound();
		const since = c.req.query("since");
		const comments = issue.comments.filter(
			(cm) => since === undefined || Date.parse(cm.updatedAt) >= Date.parse(since),
		);
		const { page, headers } = paginate(c, comments);
		return send(
			200,
			page.map((cm) => state.commentJson(repo, issue, cm)),
			headers,
		);
	});

	app.post(`${R}/issues/${N}/comments`, (c) => {
		const repo = repoOf(c);
		const issue = repo && issueOf(c, repo);
		if (!repo || !issue) return notFound();
		const b = body(c);
		if (typeof b.body !== "string" || b.body === "") {
			return invalid([{ resource: "IssueComment", code: "missing_field", field: "body" }]);
		}
		const at = now();
		const comment = {
			id: state.id(),
			body: b.body,
			user: state.login,
			createdAt: at,
			updatedAt: at,
		};
		issue.comments.push(comment);
		issue.updatedAt = at;
		const json = state.commentJson(repo, issue, comment);
		return send(201, json, { location: json.url });
	});

	app.patch(`${R}/issues/comments/:comment_id${ID}`, (c) => {
		const repo = repoOf(c);
		if (!repo) return notFound();
		const id = Number(c.req.param("comment_id"));
		for (const issue of repo.issues.values()) {
			const comment = issue.comments.find((cm) => cm.id === id);
			if (!comment) continue;
			const b = body(c);
			if (typeof b.body !== "string" || b.body === "") {
				return invalid([{ resource: "IssueComment", code: "missing_field", field: "body" }]);
			}
			comment.body = b.body;
			comment.updatedAt = now();
			return send(200, state.commentJson(repo, issue, comment));
		}
		return notFound();
	});

	// ------------------------------------------- sub-issues and dependencies (issue relations)

	/** The issues of `ids` (sub-issues, blockers) as GitHub lists them, one page at a time. */
	const listIssues = (c: C, ids: number[]) => {
		const found = ids.flatMap((id) => {
			const hit = state.issueById(id);
			return hit ? [state.issueJson(hit.repo, hit.issue)] : [];
		});
		const { page, headers } = paginate(c, found);
		return send(200, page, headers);
	};
	/** The issue named by an id in the body: another issue of the same owner, not a pull request. */
	const relatedIssue = (c: C, repo: RepoRec, issue: IssueRec, field: string) => {
		const id = body(c)[field];
		const hit = typeof id === "number" ? state.issueById(id) : undefined;
		if (!hit || hit.issue === issue || hit.repo.owner.toLowerCase() !== repo.owner.toLowerCase())
			return undefined;
		return hit;
	};

	app.get(`${R}/issues/${N}/sub_issues`, (c) => {
		const repo = repoOf(c);
		const issue = repo && issueOf(c, repo);
		if (!repo || !issue || !state.features.subIssues) return notFound();
		return listIssues(c, issue.subIssues);
	});

	app.post(`${R}/issues/${N}/sub_issues`, (c) => {
		const repo = repoOf(c);
		const issue = repo && issueOf(c, repo);
		if (!repo || !issue || !state.features.subIssues) return notFound();
		const hit = relatedIssue(c, repo, issue, "sub_issue_id");
		if (!hit) return invalid([{ resource: "Issue", code: "invalid", field: "sub_issue_id" }]);
		const parent = state.parentOf(hit.issue.id);
		if (parent && body(c).replace_parent !== true) {
			const message = "Sub issue may only have one parent";
			return invalid([{ resource: "Issue", code: "custom", field: "sub_issue_id", message }]);
		}
		if (parent) parent.subIssues = parent.subIssues.filter((id) => id !== hit.issue.id);
		issue.subIssues.push(hit.issue.id);
		issue.updatedAt = now();
		return send(201, state.issueJson(repo, issue, true));
	});

	app.get(`${R}/issues/${N}/dependencies/blocked_by`, (c) => {
		const repo = repoOf(c);
		const issue = repo && issueOf(c, repo);
		if (!repo || !issue || !state.features.dependencies) return notFound();
		return listIssues(c, issue.blockedBy);
	});

	app.post(`${R}/issues/${N}/dependencies/blocked_by`, (c) => {
		const repo = repoOf(c);
		const issue = repo && issueOf(c, repo);
		if (!repo || !issue || !state.features.dependencies) return notFound();
		const hit = relatedIssue(c, repo, issue, "issue_id");
		if (!hit) return invalid([{ resource: "Issue", code: "invalid", field: "issue_id" }]);
		if (issue.blockedBy.includes(hit.issue.id)) {
			const message = "Issue is already blocked by this issue";
			return invalid([{ resource: "Issue", code: "custom", field: "issue_id", message }]);
		}
		issue.blockedBy.push(hit.issue.id);
		issue.updatedAt = now();
		return send(201, state.issueJson(repo, issue, true));
	});

	// ---------------------------------------------------------------- labels

	const issueLabels = (repo: RepoRec, issue: IssueRec) =>
		issue.labels.map((l) => state.labelJson(repo, l));

	app.get(`${R}/issues/${N}/labels`, (c) => {
		const repo = repoOf(c);
		const issue = repo && issueOf(c, repo);
		if (!repo || !issue) return notFound();
		return send(200, issueLabels(repo, issue));
	});

	const addOrSet = (replace: boolean) => (c: C) => {
		const repo = repoOf(c);
		const issue = repo && issueOf(c, repo);
		if (!repo || !issue) return notFound();
		const raw = c.get("body");
		const names = labelNames(Array.isArray(raw) ? raw : body(c).labels);
		if (!names) return invalid([{ resource: "Label", code: "invalid", field: "labels" }]);
		const resolved = names.map((l) => state.ensureLabel(repo, l).name);
		issue.labels = dedupe(replace ? resolved : [...issue.labels, ...resolved]);
		issue.updatedAt = now();
		return send(200, issueLabels(repo, issue));
	};
	app.post(`${R}/issues/${N}/labels`, addOrSet(false));
	app.put(`${R}/issues/${N}/labels`, addOrSet(true));

	app.delete(`${R}/issues/${N}/labels/:name`, (c) => {
		const repo = repoOf(c);
		const issue = repo && issueOf(c, repo);
		if (!repo || !issue) return notFound();
		const name = (c.req.param("name") ?? "").toLowerCase();
		const index = issue.labels.findIndex((l) => l.toLowerCase() === name);
		if (index < 0) return fail(404, "Label does not exist", DOC_REMOVE_LABEL);
		issue.labels.splice(index, 1);
		issue.updatedAt = now();
		return send(200, issueLabels(repo, issue));
	});

	app.get(`${R}/labels`, (c) => {
		const repo = repoOf(c);
		if (!repo) return notFound();
		const { page, headers } = paginate(c, repo.labels);
		return send(
			200,
			page.map((l) => state.labelJson(repo, l.name)),
			headers,
		);
	});

	app.post(`${R}/labels`, (c) => {
		const repo = repoOf(c);
		if (!repo) return notFound();
		const b = body(c);
		if (typeof b.name !== "string" || b.name === "") {
			return invalid([{ resource: "Label", code: "missing_field", field: "name" }]);
		}
		const name = b.name;
		if (repo.labels.some((l) => l.name.toLowerCase() === name.toLowerCase())) {
			return invalid([{ resource: "Label", code: "already_exists", field: "name" }]);
		}
		const label = state.ensureLabel(repo, name);
		if (typeof b.color === "string") label.color = b.color.replace(/^#/, "");
		if (typeof b.description === "string") label.description = b.description;
		const json = state.labelJson(repo, name);
		return send(201, json, { location: json.url });
	});

	return app;
}

function sortBy<T>(items: T[], key: (item: T) => string | number, dir: 1 | -1): T[] {
	return items
		.map((item, index) => ({ item, index, k: key(item) }))
		.sort((a, b) => (a.k < b.k ? -dir : a.k > b.k ? dir : (a.index - b.index) * dir))
		.map((e) => e.item);
}

function dedupe(names: string[]): string[] {
	const seen = new Set<string>();
	return names.filter((n) => !seen.has(n.toLowerCase()) && seen.add(n.toLowerCase()));
}

function stringList(value: unknown): string[] {
	return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

/** Labels arrive as ["a", "b"] or [{ name: "a" }]; anything else is not a label list. */
function labelNames(value: unknown): string[] | undefined {
	if (!Array.isArray(value)) return undefined;
	const names: string[] = [];
	for (const v of value) {
		if (typeof v === "string") names.push(v);
		else if (v && typeof v === "object" && typeof (v as Obj).name === "string") {
			names.push((v as Obj).name as string);
		} else return undefined;
	}
	return names;
}
