import type { AgentState } from "../../shared/domain/states";
import type { DynamoStore } from "../../shared/store/dynamo";

export const HEARTBEAT_MS = 10_000;

/**
 * Writes the step's heartbeat and agent state every ~10 s, and at once when the state changes; the
 * sweeper treats silence as a lost task.
 */
export class Heartbeat {
	private timer?: NodeJS.Timeout;
	state: AgentState = "just_started";

	constructor(
		private readonly store: DynamoStore,
		private readonly runId: string,
		private readonly stepIndex: number,
		private readonly attempt: number,
		private readonly onError: (err: unknown) => void,
	) {}

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

	stop(): void {
		if (this.timer) clearInterval(this.timer);
	}

	private async beat(): Promise<void> {
		try {
			await this.store.updateStepFields(this.runId, this.stepIndex, this.attempt, {
				heartbeatAt: new Date().toISOString(),
				agentState: this.state,
			});
		} catch (err) {
			this.onError(err);
		}
	}
}
