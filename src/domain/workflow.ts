import type { LisaConfig, SourceConfig } from "../config/schema";

// The tracker workflow as the config names it: where issues wait, are worked on, and end up.

/** The repository whose issues Lisa works on with GitHub Issues: the configured team, else the first repo. */
export const gitHubIssuesRepo = (config: LisaConfig): string | undefined =>
	config.source_config.team ?? config.repos[0]?.slug;

/** Tracker names are matched the way people type them: trimmed, case-insensitive. */
export function sameName(a: string | undefined | null, b: string | undefined | null): boolean {
	return a != null && b != null && a.trim().toLowerCase() === b.trim().toLowerCase();
}

/** Every state name of the workflow, without duplicates. */
export function workflowStates(sc: SourceConfig): string[] {
	const names = [sc.pick_from, sc.in_progress, sc.done, sc.merged].filter((n): n is string => !!n);
	return names.filter((n, i) => names.findIndex((m) => sameName(m, n)) === i);
}

/** The query for issues labelled for Lisa in `state` (pick_from when polling). */
export function issueQuery(sc: SourceConfig, state: string = sc.pick_from) {
	return {
		team: sc.team,
		project: sc.project,
		label: sc.label,
		state,
		workflow: workflowStates(sc),
	};
}

/** The label removed after success: the trigger label, another one, or none. */
export function labelToRemove(sc: SourceConfig): string | undefined {
	return sc.remove_label === true ? sc.label : sc.remove_label || undefined;
}
