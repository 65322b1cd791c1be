import type { AgentState, RunStatus, StepStatus } from "../domain/states";

// What the CLI reads from Lisa's HTTP API (README › HTTP API; `runView` in src/api/runs.ts). The CLI is
// a client of the API, so it keeps its own view of the wire shapes instead of the store's types.

export interface StepView {
	index: number;
	repo: string;
	kind?: "plan";
	scope?: string;
	status: StepStatus;
	attempt: number;
	provider?: string;
	agentState?: AgentState;
	branch?: string;
	prUrl?: string;
	error?: string;
	launchedAt?: string;
	finishedAt?: string;
}

export interface RunView {
	id: string;
	source: string;
	issueId: string;
	issueKey?: string;
	title?: string;
	url?: string;
	trigger: string;
	status: RunStatus;
	steps: StepView[];
	error?: string;
	createdAt: string;
	updatedAt: string;
	finishedAt?: string;
	prUrls: string[];
	links?: { dashboard?: string; events?: string };
}

export interface EventView {
	id: string;
	at: string;
	type: string;
	step?: number;
	message: string;
}

export interface RunsPage {
	runs: RunView[];
	nextCursor: string | null;
}

export interface EventsPage {
	events: EventView[];
	nextCursor: string | null;
}

export interface StatsView {
	counts: Record<RunStatus, number>;
	total: number;
	successRate: number | null;
}
