// How a command ends: a CliError is a message for the user (no stack), anything else is a bug.

export class CliError extends Error {
	constructor(
		message: string,
		readonly exitCode = 1,
	) {
		super(message);
		this.name = "CliError";
	}
}

/** Runs a command body and exits with its code once stdout is flushed; a CliError prints its message. */
export async function exitWith(body: () => Promise<number>): Promise<never> {
	let code: number;
	try {
		code = await body();
	} catch (err) {
		if (!(err instanceof CliError)) throw err;
		console.error(err.message);
		code = err.exitCode;
	}
	await new Promise<void>((resolve) => process.stdout.write("", () => resolve()));
	process.exit(code);
}
