import path from "node:path";
import { pathToFileURL } from "node:url";
import * as z from "zod";
import { FARGATE_LIST_PRICE, type PriceTable } from "../domain/cost";
import { HOST_PATTERN, normalHost } from "../domain/egress";
import type { FollowUpSettings } from "../domain/follow-up";
import { unknownKeyFix } from "./unknown-keys";

// `.lisa/config.yaml` (docs/config.md › Config): the original CLI's fields and old aliases, plus
// the hosted additions. Every mapping is strict: a misspelled key is an error with the nearest
// valid name, never silently dropped (a dropped `validate` would mean validation never runs).

const PROVIDERS = ["claude", "gemini", "opencode", "codex", "builtin"] as const;
export type ProviderName = (typeof PROVIDERS)[number];
export const SOURCES = ["linear", "trello", "github"] as const;
export type SourceName = (typeof SOURCES)[number];

/** One entry of `models`, as written ("claude" or "claude:claude-sonnet-4-5") and parsed. */
export interface ModelSpec {
	spec: string;
	provider: ProviderName;
	model?: string;
}

/** The one reading of a `models` entry: the provider before the first ":", the model after it. */
export function parseModelSpec(spec: string): ModelSpec {
	const colon = spec.indexOf(":");
	const provider = (colon < 0 ? spec : spec.slice(0, colon)) as ProviderName;
	if (!(PROVIDERS as readonly string[]).includes(provider))
		throw new Error(`unknown provider "${provider}" in model "${spec}"`);
	const model = colon < 0 ? undefined : spec.slice(colon + 1).trim() || undefined;
	return { spec, provider, model };
}

const isModelSpec = (spec: string): boolean => {
	try {
		parseModelSpec(spec);
		return true;
	} catch {
		return false;
	}
};

const commandList = z
	.union([z.string().min(1), z.array(z.string().min(1))])
	.transform((v) => (typeof v === "string" ? [v] : v));

const modelSpec = z
	.string()
	.min(1)
	.refine(isModelSpec, {
		message: `must be "provider" or "provider:model" with provider one of ${PROVIDERS.join(", ")}`,
	});

/**
 * `follow_up` (docs/follow-ups.md › Follow-ups): every field optional, both at the top and per
 * repository.
 */
const followUpSchema = z
	.strictObject({
		ci: z.boolean(),
		reviews: z.boolean(),
		mentions: z.boolean(),
		// `commented` reviews with inline comments start a round too, not only `changes_requested`.
		review_comments: z.boolean(),
		max_rounds: z.number().int().min(0).max(20),
		// SQS delays a message at most 15 minutes.
		debounce_seconds: z.number().int().min(0).max(900),
		allow: z.array(z.string().min(1)),
	})
	.partial();

const FOLLOW_UP_DEFAULTS: FollowUpSettings = {
	ci: true,
	reviews: true,
	mentions: true,
	review_comments: true,
	max_rounds: 3,
	debounce_seconds: 60,
	allow: [],
};

const repoSchema = z.strictObject({
	name: z
		.string()
		.min(1)
		.regex(/^[A-Za-z0-9._-]+$/, "use letters, digits, '.', '_' or '-'"),
	url: z.string().min(1),
	slug: z
		.string()
		.regex(/^[^/\s]+\/[^/\s]+$/, 'must be "owner/name"')
		.optional(),
	base_branch: z.string().min(1).optional(),
	match: z.array(z.string()).default([]),
	setup: commandList.default([]),
	validate: commandList.default([]),
	allow_workflow_changes: z.boolean().default(false),
	// Let Claude Code create its own worktree (`--worktree`;
	// docs/agent-task.md › Providers and models) instead of Lisa's.
	native_worktree: z.boolean().default(false),
	// Overrides the top-level `follow_up` for this repository's pull requests.
	follow_up: followUpSchema.optional(),
	// What this repository's runs may spend a day, besides `limits.daily_budget_usd` for all.
	daily_budget_usd: z.number().positive().optional(),
	// The hosts its agent may reach besides the code host, when its network is confined.
	network: z
		.strictObject({
			allow: z
				.array(
					z
						.string()
						.transform(normalHost)
						.pipe(z.string().regex(HOST_PATTERN, "use a host name, an IP address or *.domain")),
				)
				.default([]),
		})
		.default({ allow: [] }),
});

const sourceConfigSchema = z.strictObject({
	team: z.string().optional(),
	scope: z.string().optional(),
	project: z.string().optional(),
	label: z.string().min(1).default("lisa"),
	// true: remove the trigger label after success; a name: remove that label; false: keep labels.
	remove_label: z.union([z.boolean(), z.string().min(1)]).default(true),
	pick_from: z.string().min(1).default("Todo"),
	in_progress: z.string().min(1).default("In Progress"),
	done: z.string().min(1).default("In Review"),
	merged: z.string().min(1).optional(),
});

const limitsSchema = z.strictObject({
	max_concurrent_runs: z.number().int().positive().default(5),
	step_timeout_minutes: z.number().positive().default(60),
	max_attempts: z.number().int().positive().default(3),
	max_validation_retries: z.number().int().min(0).default(2),
	stale_output_seconds: z.number().int().positive().default(240),
	parallel_steps: z.number().int().positive().default(1),
	retry_backoff_seconds: z.number().min(0).default(10),
	// A run (with its follow-up rounds) pauses for approval when its cost passes this.
	max_run_cost_usd: z.number().positive().default(10),
	// What all runs may spend a day (UTC); unset: no daily budget.
	daily_budget_usd: z.number().positive().optional(),
	// A run waiting for approval fails after this long.
	approval_timeout_hours: z.number().positive().max(720).default(72),
});

const usdPerMillion = z.number().min(0).max(10_000);
/** One model's price, USD per million tokens; a cache price missing is taken as the input's. */
const tokenPriceSchema = z.strictObject({
	input: usdPerMillion,
	output: usdPerMillion,
	cache_read: usdPerMillion.optional(),
	cache_write: usdPerMillion.optional(),
});

const computePriceSchema = z.strictObject({
	vcpu_hour: z.number().min(0).default(FARGATE_LIST_PRICE.vcpu_hour),
	gb_hour: z.number().min(0).default(FARGATE_LIST_PRICE.gb_hour),
	ipv4_hour: z.number().min(0).default(FARGATE_LIST_PRICE.ipv4_hour),
});

// Epics (docs/epics.md › Epics): an issue with this label is planned into sub-issues worked in
// order.
const epicSchema = z.strictObject({
	label: z.string().min(1).default("lisa-epic"),
	// Set on an epic whose description is not enough to plan, with the research's questions.
	needs_spec_label: z.string().min(1).default("needs-spec"),
	max_tasks: z.number().int().min(1).max(15).default(10),
});

const commentsSchema = z.strictObject({
	enabled: z.boolean().default(true),
});

export const configSchema = z.strictObject({
	source: z.enum(SOURCES).default("linear"),
	provider: z.enum(PROVIDERS).default("claude"),
	models: z.array(modelSpec).min(1).optional(),
	source_config: sourceConfigSchema.default(sourceConfigSchema.parse({})),
	base_branch: z.string().min(1).default("main"),
	branch_prefix: z.string().default("feat/"),
	repos: z.array(repoSchema).min(1),
	limits: limitsSchema.default(limitsSchema.parse({})),
	comments: commentsSchema.default(commentsSchema.parse({})),
	follow_up: followUpSchema.default({}),
	epic: epicSchema.default(epicSchema.parse({})),
	// "<provider>:<model>" → USD per million tokens, over the built-in list
	// (docs/cost.md › Cost and budgets).
	pricing: z
		.record(z.string().regex(/^[a-z]+:.+$/, 'use "<provider>:<model>" keys'), tokenPriceSchema)
		.default({}),
	// The agent container's price (Fargate on demand); zero on the local stack.
	compute_pricing: computePriceSchema.default(computePriceSchema.parse({})),
	// Accepted for compatibility with the original CLI; the hosted pipeline always uses worktrees.
	workflow: z.enum(["worktree", "branch"]).optional(),
});

export type RepoConfig = z.infer<typeof repoSchema> & { slug?: string; base_branch: string };
export type LisaConfig = Omit<
	z.infer<typeof configSchema>,
	"models" | "repos" | "follow_up" | "pricing"
> & {
	models: string[];
	pricing: PriceTable;
	follow_up: FollowUpSettings;
	repos: RepoConfig[];
};
export type SourceConfig = LisaConfig["source_config"];

const FIX_HINTS: [RegExp, string][] = [
	[/^repos$/, "add at least one repository under `repos:` with a `name` and a `url`"],
	[/^repos\.\d+\.url$/, "set `url:` to any git URL (https://github.com/owner/name.git, file:///…)"],
	[/^repos\.\d+\.name$/, "give the repo a short `name:` such as `api`"],
	[/^repos\.\d+\.slug$/, "set `slug: owner/name` (the repository on the code host)"],
	[/^models/, `list providers as "claude" or "claude:model-name" (${PROVIDERS.join(", ")})`],
	[/^provider$/, `use one of ${PROVIDERS.join(", ")}`],
	[/^source$/, `use one of ${SOURCES.join(", ")}`],
	[/^limits\./, "use a positive number"],
	[/(^|\.)follow_up\./, "see docs/follow-ups.md › Follow-ups"],
	[/^(pricing|compute_pricing)/, "see docs/cost.md › Cost and budgets"],
];

/** What to write instead, for a value of the wrong type. */
const TYPE_HINTS: Record<string, string> = {
	boolean: "write true or false, without quotes",
	number: "write a number, without quotes",
	string: "write a text value",
	array: "write a list: [a, b] or one `- item` per line",
	object: "write a mapping: one `key: value` per line, indented under it",
};

type Issue = z.core.$ZodIssue;

function hintFor(field: string, issue: Issue): string {
	const byField = FIX_HINTS.find(([re]) => re.test(field))?.[1];
	const byType = issue.code === "invalid_type" ? TYPE_HINTS[issue.expected] : undefined;
	return byField ?? byType ?? README_CONFIG;
}

const README_CONFIG = "see docs/config.md › Config";

function problemsOf(issue: Issue): { field: string; message: string; fix: string }[] {
	const at = issue.path.map(String);
	if (issue.code === "unrecognized_keys")
		return issue.keys.map((key) => ({
			// An empty key is named as written (`""`), not taken for the whole file.
			field: [...at, key || '""'].join("."),
			message: "unknown key",
			fix: unknownKeyFix(configSchema, issue.path, key),
		}));
	const field = at.join(".");
	return [{ field, message: issue.message, fix: hintFor(field, issue) }];
}

export interface ConfigProblem {
	field: string;
	message: string;
	fix?: string;
}

/** One problem as a line: `field: message — fix: …`. */
export const formatProblem = (p: ConfigProblem): string =>
	`${p.field || "(root)"}: ${p.message}${p.fix ? ` — fix: ${p.fix}` : ""}`;

export class ConfigError extends Error {
	constructor(
		readonly file: string,
		readonly problems: ConfigProblem[],
	) {
		super(`invalid config ${file}:\n${problems.map((p) => `  - ${formatProblem(p)}`).join("\n")}`);
		this.name = "ConfigError";
	}
}

type Raw = Record<string, unknown>;
const isObject = (v: unknown): v is Raw => typeof v === "object" && v !== null && !Array.isArray(v);

function firstDefined(obj: Raw, ...keys: string[]): unknown {
	for (const k of keys) if (obj[k] !== undefined && obj[k] !== null && obj[k] !== "") return obj[k];
	return undefined;
}

/** Maps the original CLI's field names and old aliases onto the current ones. */
function applyAliases(raw: Raw, configDir: string): Raw {
	const out: Raw = { ...raw };
	// The original CLI's settings that the hosted pipeline has no use for: accepted, ignored.
	for (const ignored of ["github", "loop", "logs"]) delete out[ignored];
	if (isObject(raw.source_config)) {
		const sc = raw.source_config;
		const next: Raw = { ...sc };
		next.team = firstDefined(sc, "team", "board", "scope");
		next.project = firstDefined(sc, "project", "list");
		next.pick_from = firstDefined(sc, "pick_from", "initial_status");
		next.in_progress = firstDefined(sc, "in_progress", "active_status");
		next.done = firstDefined(sc, "done", "done_status");
		if (raw.source === "trello" && next.pick_from === undefined) next.pick_from = next.project;
		for (const old of ["board", "list", "initial_status", "active_status", "done_status"])
			delete next[old];
		for (const k of Object.keys(next)) if (next[k] === undefined) delete next[k];
		out.source_config = next;
	}
	if (Array.isArray(raw.repos)) {
		out.repos = raw.repos.map((r) => {
			if (!isObject(r)) return r;
			const repo: Raw = { ...r };
			// The original CLI pointed at local checkouts (`path`); the hosted pipeline clones a URL.
			if (repo.url === undefined && typeof repo.path === "string")
				repo.url = pathToFileURL(path.resolve(configDir, repo.path)).href;
			if (repo.setup === undefined && isObject(repo.lifecycle) && repo.lifecycle.setup)
				repo.setup = repo.lifecycle.setup;
			delete repo.path;
			delete repo.lifecycle;
			return repo;
		});
	}
	return out;
}

/** owner/name from a GitHub-style URL (https, ssh or scp-like), if it looks like one. */
export function slugFromUrl(url: string): string | undefined {
	const m = url.match(
		/^(?:https?:\/\/[^/]+\/|ssh:\/\/git@[^/]+\/|git@[^:]+:)([^/]+)\/([^/]+?)(?:\.git)?\/?$/,
	);
	return m ? `${m[1]}/${m[2]}` : undefined;
}

export function parseConfig(raw: unknown, file = ".lisa/config.yaml"): LisaConfig {
	if (!isObject(raw))
		throw new ConfigError(file, [
			{ field: "", message: "expected a YAML mapping", fix: README_CONFIG },
		]);
	const result = configSchema.safeParse(applyAliases(raw, path.dirname(path.resolve(file))));
	if (!result.success) {
		throw new ConfigError(file, result.error.issues.flatMap(problemsOf));
	}
	const c = result.data;
	return {
		...c,
		models: c.models ?? [c.provider],
		follow_up: { ...FOLLOW_UP_DEFAULTS, ...c.follow_up },
		pricing: Object.fromEntries(
			Object.entries(c.pricing).map(([k, p]) => [
				k,
				{ ...p, cache_read: p.cache_read ?? p.input, cache_write: p.cache_write ?? p.input },
			]),
		),
		repos: c.repos.map((r) => ({
			...r,
			slug: r.slug ?? slugFromUrl(r.url),
			base_branch: r.base_branch ?? c.base_branch,
		})),
	};
}
