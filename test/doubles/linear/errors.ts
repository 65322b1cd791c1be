/** Errors shaped like the ones Linear's API returns (`errors[].extensions.type` drives the SDK). */

export interface LinearErrorExtensions {
	type: string;
	code: string;
	statusCode?: number;
	userError?: boolean;
	userPresentableMessage?: string;
	[key: string]: unknown;
}

/** Thrown from resolvers; graphql-js copies `extensions` onto the reported error. */
export class LinearDoubleError extends Error {
	constructor(
		message: string,
		readonly extensions: LinearErrorExtensions,
	) {
		super(message);
		this.name = "LinearDoubleError";
	}
}

/** "Entity not found: Issue", as Linear reports an unknown id. */
export function notFound(entity: string, detail?: string): LinearDoubleError {
	return new LinearDoubleError(`Entity not found: ${entity}`, {
		type: "invalid input",
		code: "INPUT_ERROR",
		statusCode: 400,
		userError: true,
		userPresentableMessage: detail ?? `Could not find referenced ${entity}.`,
	});
}

export function invalidInput(message: string, userPresentableMessage?: string): LinearDoubleError {
	return new LinearDoubleError(message, {
		type: "invalid input",
		code: "INPUT_ERROR",
		statusCode: 400,
		userError: true,
		...(userPresentableMessage ? { userPresentableMessage } : {}),
	});
}

/** A gap in the double: loud, so a test fails instead of silently getting defaults. */
export function notImplemented(what: string): LinearDoubleError {
	return new LinearDoubleError(`not implemented in the Linear double: ${what}`, {
		type: "graphql error",
		code: "NOT_IMPLEMENTED_IN_DOUBLE",
		statusCode: 400,
	});
}

export const AUTHENTICATION_ERROR = {
	message: "Authentication required, not authenticated",
	extensions: {
		type: "authentication error",
		code: "AUTHENTICATION_ERROR",
		statusCode: 401,
		userError: true,
		userPresentableMessage: "You need to authenticate to access this operation.",
	},
} as const;
