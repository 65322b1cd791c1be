import { LinearClient, LinearError, LinearErrorType } from "@linear/sdk";
import { type Tracker, TrackerError, type TrackerIssue } from "./tracker";

const TRANSIENT: ReadonlySet<string> = new Set([
	LinearErrorType.Ratelimited,
	LinearErrorType.NetworkError,
	LinearErrorType.InternalError,
	LinearErrorType.LockTimeout,
	LinearErrorType.Unknown,
]);

/** `ENG-123` from a Linear issue URL, else the reference as given (id or key). */
export function linearIssueRef(ref: string): string {
	return ref.match(/\/issue\/([A-Za-z0-9]+-\d+)/)?.[1] ?? ref.trim();
}

async function call<T>(what: string, fn: () => Promise<T>): Promise<T> {
	try {
		return await fn();
	} catch (err) {
		if (err instanceof TrackerError) throw err;
		const transient = err instanceof LinearError ? TRANSIENT.has(err.type ?? "") : true;
		const reason = err instanceof Error ? err.message : String(err);
		throw new TrackerError(`Linear: ${what} failed: ${reason}`, transient, { cause: err });
	}
}

/** Linear through @linear/sdk. Workflow states are resolved by name within the issue's team. */
export class LinearTracker implements Tracker {
	readonly source = "linear" as const;
	private viewerId?: Promise<string>;

	constructor(private readonly client: LinearClient) {}

	static fromEnv(apiKey: string, apiUrl?: string): LinearTracker {
		return new LinearTracker(new LinearClient({ apiKey, ...(apiUrl ? { apiUrl } : {}) }));
	}

	fetchIssue(ref: string): Promise<TrackerIssue> {
		const id = linearIssueRef(ref);
		return call(`fetching issue ${id}`, async () => {
			const issue = await this.client.issue(id).catch((err) => {
				if (err instanceof LinearError && err.type === LinearErrorType.InvalidInput)
					throw new TrackerError(`Linear issue ${id} was not found`, false, { cause: err });
				throw err;
			});
			return {
				id: issue.id,
				key: issue.identifier,
				title: issue.title,
				description: issue.description ?? "",
				url: issue.url,
				teamId: issue.teamId,
			};
		});
	}

	moveTo(issueId: string, stateName: string): Promise<void> {
		return call(`moving ${issueId} to "${stateName}"`, async () => {
			const issue = await this.client.issue(issueId);
			if (!issue.teamId) throw new TrackerError(`Linear issue ${issueId} has no team`, false);
			const states = await this.client.workflowStates({
				filter: { team: { id: { eq: issue.teamId } } },
				first: 100,
			});
			const wanted = stateName.trim().toLowerCase();
			const state = states.nodes.find((s) => s.name.trim().toLowerCase() === wanted);
			if (!state)
				throw new TrackerError(
					`workflow state "${stateName}" not found in the team of ${issue.identifier}; available: ${states.nodes
						.map((s) => s.name)
						.join(", ")}`,
					false,
				);
			if (issue.stateId === state.id) return;
			const result = await this.client.updateIssue(issue.id, { stateId: state.id });
			if (!result.success) throw new TrackerError(`Linear refused the state change`, true);
		});
	}

	comment(issueId: string, body: string): Promise<void> {
		return call(`commenting on ${issueId}`, async () => {
			const result = await this.client.createComment({ issueId, body });
			if (!result.success) throw new TrackerError("Linear refused the comment", true);
		});
	}

	attachLink(issueId: string, url: string, title: string): Promise<void> {
		return call(`attaching ${url} to ${issueId}`, async () => {
			const result = await this.client.attachmentLinkURL(issueId, url, { title });
			if (!result.success) throw new TrackerError("Linear refused the attachment", true);
		});
	}

	removeLabel(issueId: string, label: string): Promise<void> {
		return call(`removing label "${label}" from ${issueId}`, async () => {
			const issue = await this.client.issue(issueId);
			const labels = await issue.labels({ first: 100 });
			const wanted = label.trim().toLowerCase();
			const keep = labels.nodes.filter((l) => l.name.trim().toLowerCase() !== wanted);
			if (keep.length === labels.nodes.length) return;
			const result = await this.client.updateIssue(issue.id, { labelIds: keep.map((l) => l.id) });
			if (!result.success) throw new TrackerError("Linear refused the label change", true);
		});
	}

	selfActorId(): Promise<string | undefined> {
		this.viewerId ??= call("reading the API key's user", async () => (await this.client.viewer).id);
		// A failed lookup is not cached: the next event asks again.
		this.viewerId.catch(() => {
			this.viewerId = undefined;
		});
		return this.viewerId;
	}
}
