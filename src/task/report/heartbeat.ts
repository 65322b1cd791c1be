import type { Step } from "../../domain/run";
import type { AgentState } from "../../domain/states";
import type { TaskStepFields, TaskStore } from "../../store";
import { StepFailure, Superseded } from "./failure";

const HEARTBEAT_MS = 10_000;

/**
 * Writes the step's heartbeat and agent state every ~10 s, and at once when the state changes; the
 * sweeper treats silence as a lost task. Every write of the step goes through here: the store
 * refuses one once the step is no longer this attempt's (retried, stopped), and from then on
 * `signal` is aborted so the task stops its agent and leaves without pushing or reporting.
 */
export class Heartbeat {
	private timer?: NodeJS.Timeout;
	private readonly superseded = new AbortController();
	state: AgentState = "just_started";
	private provider?: string;

	constructor(
		private readonly store: TaskStore,
		private readonly runId: string,
		private readonly stepIndex: number,
		private readonly attempt: number,
		private readonly onError: (err: unknown) => void,
	) {}

	/** Aborted once a write of the step was refused. */
	get signal(): AbortSignal {
		return this.superseded.signal;
	}

	start(): void {
		void this.beat();
		this.timer = setInterval(() => void this.beat(), HEARTBEAT_MS);
		this.timer.unref();
	}

	async set(state: AgentState): Promise<void> {
		if (state === this.state) return;
		this.state = state;
		await this.beat();
	}

	/** A model starts: the step shows which, also when the step then fails. */
	async started(provider: string): Promise<void> {
		this.provider = provider;
		this.state = "just_started";
		await this.beat();
	}

	stop(): void {
		if (this.timer) clearInterval(this.timer);
	}

	/** Writes fields of the step; false when the step is no longer this attempt's. */
	async write(fields: TaskStepFields): Promise<boolean> {
		if (this.signal.aborted) return false;
		const ok = await this.store.updateStepFields(this.runId, this.stepIndex, this.attempt, fields);
		if (!ok) {
			this.stop();
			this.superseded.abort(new Superseded());
		}
		return ok;
	}

	/** Throws Superseded once a write was refused. */
	check(): void {
		if (this.signal.aborted) throw new Superseded();
	}

	/** A heartbeat written now, which must be accepted: the step is still this attempt's. */
	async confirm(): Promise<void> {
		let ok: boolean;
		try {
			ok = await this.write(this.fields());
		} catch (err) {
			throw new StepFailure(
				`could not confirm the step is still this attempt's: ${(err as Error).message}`,
				true,
				"publish",
			);
		}
		if (!ok) throw new Superseded();
	}

	private fields(): Pick<Step, "heartbeatAt" | "agentState" | "provider"> {
		return {
			heartbeatAt: new Date().toISOString(),
			agentState: this.state,
			...(this.provider ? { provider: this.provider } : {}),
		};
	}

	private async beat(): Promise<void> {
		try {
			await this.write(this.fields());
		} catch (err) {
			this.onError(err);
		}
	}
}
