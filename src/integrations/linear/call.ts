import { LinearError, LinearErrorType } from "@linear/sdk";
import { sameName } from "../../domain/workflow";
import { TrackerError } from "../tracker";

const TRANSIENT: ReadonlySet<string> = new Set([
	LinearErrorType.Ratelimited,
	LinearErrorType.NetworkError,
	LinearErrorType.InternalError,
	LinearErrorType.LockTimeout,
	LinearErrorType.Unknown,
]);

/** Runs a Linear call, turning its failure into a TrackerError (rate limits and outages transient). */
export async function call<T>(what: string, fn: () => Promise<T>): Promise<T> {
	try {
		return await fn();
	} catch (err) {
		if (err instanceof TrackerError) throw err;
		const transient = err instanceof LinearError ? TRANSIENT.has(err.type ?? "") : true;
		const reason = err instanceof Error ? err.message : String(err);
		throw new TrackerError(`Linear: ${what} failed: ${reason}`, transient, { cause: err });
	}
}

/** Linear answers an unknown id with an "invalid input" error: the issue or session does not exist. */
export function notFoundAs(what: string) {
	return (err: unknown): never => {
		if (err instanceof LinearError && err.type === LinearErrorType.InvalidInput)
			throw new TrackerError(`${what} was not found`, false, { cause: err });
		throw err;
	};
}

/** The team's workflow state named `name`; the states there are, named, when none is. */
export function stateNamed<S extends { id: string; name: string }>(
	states: readonly S[],
	name: string,
	issueKey: string,
): S {
	const state = states.find((s) => sameName(s.name, name));
	if (!state)
		throw new TrackerError(
			`workflow state "${name}" not found in the team of ${issueKey}; available: ${states.map((s) => s.name).join(", ")}`,
			false,
		);
	return state;
}
