/** A version-checked write lost: the run changed since it was read. Read it again and decide again. */
export class VersionConflict extends Error {
	constructor(runId: string, version: number) {
		super(`run ${runId} changed since version ${version}`);
		this.name = "VersionConflict";
	}
}

/** A listing's cursor that this store did not make for this listing. */
export class InvalidCursor extends Error {
	constructor() {
		super("invalid cursor");
		this.name = "InvalidCursor";
	}
}
