import type { TerminalRunStatus } from "./states";

// Every kind of entry a run's timeline holds (GET /api/runs/:id/events, the dashboard, `lisa status`):
// one list, so a writer cannot misspell a name a reader waits for.

const TIMELINE_EVENTS = [
	// The run (the pipeline's handlers).
	"run.requested",
	"run.started",
	"run.planning",
	"run.waiting",
	"run.redriven",
	// Budgets (docs/cost.md › Cost and budgets).
	"run.awaiting_approval",
	"run.approved",
	"approval.ignored",
	"run.succeeded",
	"run.failed",
	"run.cancelled",
	// Its steps and their attempts.
	"step.launched",
	"step.launch_failed",
	"step.running",
	"step.reported",
	"step.retry",
	"step.succeeded",
	"step.failed",
	"step.lost",
	"step.crashed",
	"step.timed_out",
	"task.stop_failed",
	"attempt.superseded",
	// Planning.
	"plan.checked_out",
	"plan.valid",
	"plan.invalid",
	"plan.discarded",
	"plan.accepted",
	"plan.rejected",
	// Epics (docs/epics.md › Epics): the plan's tasks as sub-issues and runs of their own.
	"epic.planned",
	"epic.needs_spec",
	"epic.task_created",
	"epic.task_started",
	"epic.task_status",
	// An epic's phases inside their attempt (docs/epics.md › Epics): each try's files checked.
	"epic.research_checked",
	"epic.plan_checked",
	"epic.phase_incomplete",
	// Inside an attempt (the agent task).
	"setup.finished",
	"agent.started",
	"agent.output",
	"agent.state",
	"agent.failed",
	"agent.finished",
	"agent.unavailable",
	"agent.processes_stopped",
	"agent.unpriced",
	"broker.refused",
	"egress.denied",
	"validation.passed",
	"validation.failed",
	"gate.refused",
	"publish.pushed",
	"round.unchanged",
	"publish.pr",
	"publish.related",
	"publish.related_failed",
	// The tracker and the pull requests.
	"tracker.moved",
	"tracker.error",
	"session.acknowledged",
	"session.prompted",
	"pr.merged",
	"pr.closed",
	"pr.commented",
	// Follow-up rounds on the run's pull requests (docs/follow-ups.md › Follow-ups).
	"followup.requested",
	"followup.ignored",
	"followup.dropped",
	"followup.round",
	"followup.limit",
	"followup.stopped",
	"message.dropped",
] as const;

export type TimelineEventType = (typeof TIMELINE_EVENTS)[number];

/** The entry that ends a run's timeline: `lisa status` and the event stream wait for it. */
export const runEnded = (status: TerminalRunStatus) => `run.${status}` as const;
