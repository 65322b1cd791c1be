import { StreamRedactor, tail } from "../../domain/redact";
import type { Heartbeat } from "../report/heartbeat";
import type { Timeline } from "../report/timeline";
import type { AgentResult } from "./provider";
import { classifyAgent, shouldKill } from "./supervision";

export interface AgentIo {
	onOutput: (chunk: string) => void;
	signal: AbortSignal;
}

export interface SuperviseOptions {
	/** `limits.stale_output_seconds` in ms. */
	staleMs: number;
	heartbeat: Heartbeat;
	timeline: Timeline;
	/** Names the agent in events. */
	label: string;
	/**
	 * A fingerprint of the workspace (git status, worktree heads). A change counts as activity: an
	 * agent CLI in print mode may write nothing until it is done (the original Lisa CLI's overseer signal).
	 */
	probe?: () => Promise<string>;
	/** How often output goes to the run's timeline. */
	outputEventMs?: number;
	/** Secret values redacted from the output before it is cut and shown. */
	secrets: readonly string[];
}

export interface Supervised {
	result: AgentResult;
	/** Killed because it stayed silent for `staleMs`. */
	stuck: boolean;
}

/** The dashboard's live tail: fresh enough to watch, at most one small write per 5 s per step. */
const OUTPUT_EVENT_MS = 5_000;
const OUTPUT_EVENT_CHARS = 1_500;

/**
 * Runs one agent under watch: classifies it about every second (docs/agent-task.md › Supervision),
 * writes state changes through the heartbeat, kills it when stuck or when the step is no longer
 * this attempt's, and sends bounded output tails to the run's timeline so the API shows what it is
 * doing — redacted as one stream before they are cut, so no secret passes in pieces.
 */
export async function supervise(
	start: (io: AgentIo) => Promise<AgentResult>,
	o: SuperviseOptions,
): Promise<Supervised> {
	const controller = new AbortController();
	const tickMs = Math.max(100, Math.min(1000, o.staleMs / 4));
	const probeMs = Math.max(1000, Math.min(10_000, o.staleMs / 2));
	const eventMs = o.outputEventMs ?? OUTPUT_EVENT_MS;
	let lastActivity = Date.now();
	let lastEvent = Date.now();
	let lastProbe = 0;
	let active = false;
	let recent = "";
	// Already redacted: cutting it cannot leave a piece of a secret.
	let pending = "";
	const redactor = new StreamRedactor(o.secrets);
	let stuck = false;
	let probing = false;
	let fingerprint: string | undefined;
	// Writes started from the timer, awaited before returning so nothing is lost or reordered.
	const writes: Promise<unknown>[] = [];

	const onOutput = (chunk: string) => {
		lastActivity = Date.now();
		active = true;
		recent = tail(recent + chunk, 4096);
		pending = tail(pending + redactor.push(chunk), OUTPUT_EVENT_CHARS);
	};
	const flush = () => {
		if (!pending.trim()) return;
		const text = pending;
		pending = "";
		lastEvent = Date.now();
		writes.push(o.timeline.add("agent.output", text, { provider: o.label }));
	};
	const probe = () => {
		if (!o.probe || probing || Date.now() - lastProbe < probeMs) return;
		probing = true;
		lastProbe = Date.now();
		o.probe()
			.then((fp) => {
				if (fingerprint !== undefined && fp !== fingerprint) {
					lastActivity = Date.now();
					active = true;
				}
				fingerprint = fp;
			})
			.catch(() => {})
			.finally(() => {
				probing = false;
			});
	};
	const observe = (running: boolean, exitCode: number | null, killed: boolean) =>
		classifyAgent({
			running,
			exitCode,
			killed,
			active,
			silentMs: Date.now() - lastActivity,
			tail: recent,
			staleMs: o.staleMs,
		});

	const timer = setInterval(() => {
		probe();
		const state = observe(true, null, false);
		if (state !== o.heartbeat.state) {
			writes.push(o.heartbeat.set(state));
			if (state === "stuck" || state === "waiting_input")
				writes.push(
					o.timeline.add(
						"agent.state",
						`${o.label} is ${state === "stuck" ? "stuck" : "waiting for input"}: no output for ${Math.round((Date.now() - lastActivity) / 1000)} s`,
						{ provider: o.label, state },
					),
				);
		}
		if (shouldKill(state) && !stuck) {
			stuck = true;
			controller.abort();
		}
		if (Date.now() - lastEvent >= eventMs) flush();
	}, tickMs);

	let result: AgentResult;
	try {
		result = await start({
			onOutput,
			signal: AbortSignal.any([controller.signal, o.heartbeat.signal]),
		});
	} finally {
		clearInterval(timer);
	}
	pending = tail(pending + redactor.end(), OUTPUT_EVENT_CHARS);
	flush();
	await Promise.all(writes);
	if (stuck)
		result = {
			...result,
			ok: false,
			output: `${result.output}\n[lisa-supervisor] no output for ${Math.round(o.staleMs / 1000)} s: the agent was killed as stuck\n`,
		};
	await o.heartbeat.set(observe(false, result.exitCode, stuck || result.timedOut));
	return { result, stuck };
}
