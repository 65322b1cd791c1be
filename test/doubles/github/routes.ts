// Hono routes of the GitHub REST double: auth, fault injection, request log and the endpoints.
import { type Context, Hono } from "hono";
import {
	branchSha,
	commitsBetween,
	DOCS,
	type DoubleState,
	type IssueRec,
	now,
	type RepoRec,
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
	token: string;
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
		return new Response(JSON.stringify(body), {
			status,
			headers: {
				"content-type": "application/json; charset=utf-8",
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
		if (failure && !failure.afterHandling) {
			c.res = failed(failure);
		} else if (auth?.[1] !== ctx.token) {
			c.res = fail(401, "Bad credentials");
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
