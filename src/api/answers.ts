import * as z from "zod";
import { SOURCES } from "../config/schema";
import { stepChangesSchema } from "../domain/changes";
import { EPIC_TASK_STATUSES } from "../domain/epic";
import { EPIC_PHASES } from "../domain/epic-steps";
import { FOLLOW_UP_TRIGGERS } from "../domain/follow-up";
import { STEP_KINDS, TRIGGERS } from "../domain/run";
import { AGENT_STATES, RUN_STATUSES, type RunStatus, STEP_STATUSES } from "../domain/states";
import { attemptUsageSchema, tokenUsageSchema } from "../domain/usage";

// The runs API's answers as zod schemas: the OpenAPI document is generated from them (openapi.ts,
// imported on its first request, imports this module: the API's cold start builds none of them),
// the contract tests hold the answers to them, and the API's clients take their types from them.

export const errorAnswer = z.object({
	error: z.string(),
	issues: z.array(z.string()).optional(),
});

const usdAmount = z.number().min(0);

const costAnswer = z
	.object({
		modelUsd: usdAmount.nullable().meta({
			description:
				"What the agents' models cost: each agent run's tokens priced from `pricing` and the built-in list, or what its CLI reported if that is more; null when some agent run's cost is unknown (`unknown` says which), never a guessed zero",
		}),
		computeUsd: usdAmount.meta({
			description: "The agent containers' time at `compute_pricing` (zero on the local stack)",
		}),
		totalUsd: usdAmount.nullable().meta({ description: "model + compute; null with the model's" }),
		knownUsd: usdAmount.meta({
			description:
				"What is known for sure: priced model spend (of a model without a price, what its CLI reported: a floor) plus compute",
		}),
		unknown: z
			.array(z.string())
			.meta({ description: "The agent runs (or attempts) whose cost is unknown, and why" }),
		tokens: z.object({
			input: z.number().int(),
			output: z.number().int(),
			cacheRead: z.number().int(),
			cacheWrite: z.number().int(),
		}),
		agentSeconds: z.number().meta({ description: "The agent containers' time, launch to report" }),
	})
	.meta({ description: "A cost summed from attempts (docs/http-api.md › A run's cost)" });

const attemptCostAnswer = z.object({
	modelUsd: usdAmount
		.nullable()
		.meta({ description: "Null when some agent run's cost is unknown" }),
	knownModelUsd: usdAmount,
	spentModelUsd: usdAmount.optional().meta({
		description:
			"With some agent run's cost unknown, what budgets count of the model spend: each such run at the larger of its CLI's figure and its tokens at the dearest price Lisa knows",
	}),
	computeUsd: usdAmount,
	unknown: z.array(z.string()).optional(),
});

const stepView = z.looseObject({
	index: z.number().int(),
	repo: z.string().meta({ description: "Repo name; `*` for the planning step" }),
	kind: z.enum(STEP_KINDS).optional().meta({
		description:
			"A step that writes files over read-only checkouts of every repo: a multi-repo run's `plan`, an epic's `research` or `epic_plan`",
	}),
	scope: z.string().optional(),
	order: z.number().int().optional(),
	status: z.enum(STEP_STATUSES),
	attempt: z.number().int(),
	taskId: z.string().optional(),
	provider: z.string().optional(),
	agentState: z.enum(AGENT_STATES).optional(),
	heartbeatAt: z.string().optional(),
	branch: z.string().optional(),
	prUrl: z.string().optional(),
	prTitle: z
		.string()
		.optional()
		.meta({ description: "The title the step's pull request was opened with" }),
	changes: stepChangesSchema.optional().meta({
		description:
			"What the published commit changed since the base (a follow-up round: since the head it started from), as `git diff --numstat` counts it: totals over every file, at most 50 listed, most changed first; a binary file counts 0/0 and is marked",
	}),
	error: z.string().optional(),
	launchedAt: z.string().optional(),
	finishedAt: z.string().optional(),
	validation: z
		.object({
			agentRuns: z.number().int(),
			status: z.enum(["checking", "passed", "failed"]),
			lastFailure: z.string().optional(),
		})
		.optional(),
	usage: z
		.array(
			attemptUsageSchema
				.extend({
					attempt: z.number().int(),
					seconds: z
						.number()
						.optional()
						.meta({ description: "The attempt's container time (launch to report)" }),
					cost: attemptCostAnswer.optional().meta({
						description:
							"The attempt's cost, priced when it was recorded (absent for attempts recorded before costs were kept)",
					}),
				})
				.meta({
					description:
						"What the attempt's agent runs used (each model of the fallback chain and each validation retry), as the CLIs reported it, and what it cost",
				}),
		)
		.optional(),
	cost: costAnswer.meta({ description: "What the step's attempts cost, summed" }),
	budget: z.object({ limitUsd: z.number(), spentUsd: z.number() }).optional().meta({
		description:
			"Set at launch: the run's limit and what it (with its pull request's other rounds) had spent",
	}),
});

const approvalRequest = z.looseObject({
	requestedAt: z.string(),
	spentUsd: z.number().meta({ description: "What the run had spent when it paused" }),
	limitUsd: z.number().meta({ description: "The limit it passed" }),
	proposedLimitUsd: z.number().meta({
		description:
			"The limit an approval without one sets: what was spent plus `limits.max_run_cost_usd`",
	}),
});

const approval = z.object({
	by: z.string().meta({
		description: "Who said yes: a GitHub login, `api`, or a Linear user's name (a label)",
	}),
	byId: z.string().optional().meta({
		description: "For a yes in the Linear agent session: the Linear user's id",
	}),
	via: z.enum(["api", "github", "linear"]),
	at: z.string(),
	limitUsd: z.number().meta({ description: "The limit the approval set" }),
	spentUsd: z.number().meta({ description: "What the run had spent when approved" }),
	requestedAt: z.string().meta({ description: "The approval request it answered" }),
	steps: z.array(z.number().int()).meta({ description: "The steps it launched" }),
	commentId: z.string().optional().meta({
		description:
			"The comment (or Linear session message) that said yes: each approves one request, made before it was written",
	}),
});

const epicTaskAnswer = z.object({
	id: z.string().meta({ description: "The task file's number, as written (`01`)" }),
	title: z.string(),
	repo: z.string().meta({ description: "The configured repository it changes" }),
	dependsOn: z.array(z.string()).meta({ description: "Task ids that must be done first" }),
	status: z.enum(EPIC_TASK_STATUSES).meta({
		description:
			"planned (no sub-issue yet), waiting (for its dependencies), running, in_review (its pull requests wait to be merged), done, failed, cancelled (its run was), blocked (a task it depends on failed or was cancelled)",
	}),
	issue: z
		.object({ key: z.string().optional(), url: z.string().optional() })
		.optional()
		.meta({ description: "Its sub-issue, once created" }),
	runId: z.string().optional().meta({ description: "Its current run" }),
	prUrls: z.array(z.string()).optional(),
	reason: z
		.string()
		.optional()
		.meta({ description: "Why it failed, or which failed task blocks it" }),
});

const epicProgressAnswer = z.object({
	phase: z.enum(EPIC_PHASES).meta({
		description:
			"research, plan, tasks (its sub-issues are worked), needs_spec (the research asked questions instead), done, failed",
	}),
	questions: z
		.array(z.string())
		.optional()
		.meta({ description: "needs_spec: what the research asks before the epic can be planned" }),
	tasks: z
		.array(epicTaskAnswer)
		.meta({ description: "The plan's tasks, each after its dependencies" }),
	done: z.number().int().meta({ description: "Tasks done" }),
	total: z.number().int(),
	continues: z.string().optional().meta({ description: "The epic run this one continues" }),
});

export const epicAnswer = epicProgressAnswer.extend({
	id: z.string(),
	status: z.enum(RUN_STATUSES),
	issueKey: z.string().optional(),
	title: z.string().optional(),
	url: z.string().optional(),
	error: z.string().optional(),
	createdAt: z.string(),
	updatedAt: z.string(),
});

export const runAnswer = z.looseObject({
	id: z.string(),
	runId: z.string(),
	source: z.enum(SOURCES),
	issueId: z.string(),
	issueKey: z.string().optional(),
	title: z.string().optional(),
	url: z.string().optional(),
	trigger: z.enum(TRIGGERS),
	status: z.enum(RUN_STATUSES),
	kind: z.enum(["epic", "task"]).optional().meta({
		description:
			"epic: the run plans its issue into sub-issues (docs/epics.md › Epics); task: it works one of an epic's sub-issues; absent: an issue's run",
	}),
	epic: epicProgressAnswer.optional().meta({
		description: "An epic run: its phase and tasks (as GET /api/epics/{id} shows them)",
	}),
	epicTask: z
		.object({ runId: z.string(), taskId: z.string() })
		.optional()
		.meta({ description: "A task's run: its epic's run and the task's id" }),
	steps: z.array(stepView),
	plan: z
		.object({
			steps: z.array(z.object({ repo: z.string(), scope: z.string(), order: z.number().int() })),
		})
		.optional(),
	error: z.string().optional(),
	createdAt: z.string(),
	updatedAt: z.string(),
	finishedAt: z.string().optional(),
	repos: z.array(z.string()),
	provider: z.string().nullable().meta({ description: "The provider of the latest step that ran" }),
	durationSeconds: z.number().meta({ description: "Creation to end (or to now while active)" }),
	usage: tokenUsageSchema.meta({ description: "What every agent run of the run used, summed" }),
	cost: costAnswer.meta({
		description:
			"What the run's own steps cost (the planning step included; a follow-up round is a run of its own)",
	}),
	costWithFollowUps: costAnswer.optional().meta({
		description:
			"GET /api/runs/:id of a run with follow-up rounds: its cost plus its rounds' (the rounds read now)",
	}),
	limitUsd: z.number().nullable().meta({
		description:
			"The run's cost limit: what an approval raised it to, else `limits.max_run_cost_usd` (null without a config)",
	}),
	approval: approvalRequest.optional().meta({
		description:
			"While `awaiting_approval`: what the run spent, its limit, and the proposed new one",
	}),
	approvals: z
		.array(approval)
		.optional()
		.meta({ description: "Every yes to spending more, oldest first" }),
	prUrls: z.array(z.string()),
	parentRunId: z
		.string()
		.optional()
		.meta({ description: "A follow-up round: the run that opened the pull request it works on" }),
	round: z
		.object({
			number: z.number().int(),
			prUrl: z.string(),
			branch: z.string(),
			headSha: z.string().optional(),
		})
		.optional()
		.meta({
			description: "A follow-up round: its number, pull request, branch and starting commit",
		}),
	followUps: z
		.array(
			z.object({
				runId: z.string(),
				trigger: z.enum(FOLLOW_UP_TRIGGERS),
				prUrl: z.string(),
				at: z.string(),
				status: z.enum(RUN_STATUSES).optional(),
			}),
		)
		.meta({
			description:
				"The follow-up rounds on the run's pull requests, oldest first (their status in GET /api/runs/:id)",
		}),
	pendingFollowUps: z
		.array(z.object({ prUrl: z.string(), trigger: z.enum(FOLLOW_UP_TRIGGERS), dueAt: z.string() }))
		.meta({
			description: "Rounds being gathered (debounce), one per pull request, due at `dueAt`",
		}),
	followUpsStopped: z
		.object({ reason: z.string(), at: z.string() })
		.optional()
		.meta({ description: "The no-progress guard stopped CI rounds" }),
	links: z.object({ dashboard: z.string(), events: z.string(), stream: z.string() }),
});

export const runsAnswer = z.object({ runs: z.array(runAnswer), nextCursor: z.string().nullable() });

const eventAnswer = z.object({
	id: z.string(),
	at: z.string(),
	type: z.string(),
	step: z.number().int().optional(),
	message: z.string(),
	data: z.record(z.string(), z.unknown()).optional(),
});

export const eventsAnswer = z.object({
	events: z.array(eventAnswer),
	nextCursor: z.string().nullable(),
});

const spread = z.object({
	medianSeconds: z.number().nullable(),
	p90Seconds: z.number().nullable(),
});

const costSum = z.object({
	totalUsd: z
		.number()
		.nullable()
		.meta({ description: "Null when some agent run's cost is unknown (no price, no usage)" }),
	knownUsd: z.number().meta({ description: "What is known for sure: the total, or a floor of it" }),
});

const groupStats = z.object({
	finished: z.number().int(),
	succeeded: z.number().int(),
	failed: z.number().int(),
	successRate: z.number().nullable(),
	timeToPr: spread,
	agentSeconds: z.number(),
	cost: costSum.meta({ description: "What the group's steps cost" }),
});

export const statsAnswer = z.object({
	window: z.object({ since: z.string(), until: z.string() }),
	truncated: z.boolean().meta({
		description:
			"Runs were left out: a part day at an edge of the window had more runs than the stats read (the oldest left out), or a day was full",
	}),
	total: z.number().int(),
	counts: z.object(
		Object.fromEntries(RUN_STATUSES.map((s) => [s, z.number().int()])) as Record<
			RunStatus,
			z.ZodNumber
		>,
	),
	successRate: z.number().nullable(),
	medianDurationSeconds: z.number().nullable(),
	duration: spread,
	timeToPr: spread,
	agentSeconds: z.number(),
	cost: costSum
		.extend({
			modelUsd: z.number().nullable(),
			computeUsd: z.number(),
			unknownRuns: z.number().int().meta({ description: "Runs whose cost is unknown" }),
		})
		.meta({ description: "What the window's runs (follow-up rounds included) cost" }),
	costPerSucceededRun: z
		.number()
		.nullable()
		.meta({ description: "The succeeded runs' cost over their number" }),
	costPerMergedPr: z.number().nullable().meta({
		description:
			"Every run's cost (failures and rounds included) over the pull requests of the window's runs that merged",
	}),
	mergedPrs: z.number().int(),
	failedSpendShare: z
		.number()
		.nullable()
		.meta({ description: "The failed runs' share of the cost (0 to 1)" }),
	byRepo: z.record(z.string(), groupStats),
	byProvider: z.record(z.string(), groupStats),
	byDay: z
		.record(
			z.string(),
			z.object({
				runs: z.number().int(),
				succeeded: z.number().int(),
				failed: z.number().int(),
				cancelled: z.number().int(),
				successRate: z.number().nullable(),
				timeToPr: spread,
				cost: costSum,
			}),
		)
		.meta({ description: "Per UTC day of the runs' creation (YYYY-MM-DD), days with runs only" }),
	mostExpensive: z
		.array(
			z.object({
				runId: z.string(),
				title: z.string().optional(),
				status: z.enum(RUN_STATUSES),
				createdAt: z.string(),
				parentRunId: z.string().optional(),
				totalUsd: z.number().nullable(),
				knownUsd: z.number(),
			}),
		)
		.meta({ description: "The 10 costliest runs, by what is known of their cost" }),
});

export const rebuiltAnswer = z.object({
	window: z.object({ since: z.string(), until: z.string() }),
	runs: z.number().int().meta({ description: "Runs read (each counted once, ever)" }),
	truncated: z.boolean().meta({
		description: "More runs than one rebuild reads: the oldest left out (ask again for them)",
	}),
});

export const whoamiAnswer = z.object({
	role: z.enum(["admin", "read"]).meta({
		description: "admin: the API token, may act; read: the read-only token, may only read",
	}),
});

export const startedAnswer = z.object({ id: z.string() });
export const startedEpicAnswer = z.object({ id: z.string(), kind: z.literal("epic") });
export const cancellingAnswer = z.object({ id: z.string(), status: z.literal("cancelling") });
export const retriedAnswer = z.object({ id: z.string(), retryOf: z.string() });
export const approvingAnswer = z.object({
	id: z.string(),
	status: z.literal("approving"),
	limitUsd: z.number(),
});

// The wire types, for the API's clients (the CLI, the dashboard, the tests): one definition, these schemas.
export type RunAnswer = z.output<typeof runAnswer>;
export type StepAnswer = RunAnswer["steps"][number];
export type RunsAnswer = z.output<typeof runsAnswer>;
export type EventsAnswer = z.output<typeof eventsAnswer>;
export type EventAnswer = EventsAnswer["events"][number];
export type StatsAnswer = z.output<typeof statsAnswer>;
export type EpicAnswer = z.output<typeof epicAnswer>;
