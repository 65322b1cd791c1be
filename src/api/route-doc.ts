import type { MiddlewareHandler } from "hono";
import type * as z from "zod";
import type * as answers from "./answers";

// What a route says of itself for the OpenAPI document, beside its handler: a mark on a middleware
// that only passes the request on. The validators carry their schemas the same way (validation.ts).
// Nothing here converts a schema: src/api/openapi.ts reads the marks off the app's routes when the
// document is first asked for (docs/http-api.md › Routes).

/** The key of a route's mark (a RouteDoc) or a validator's (a ValidatorDoc). */
export const ROUTE_DOC = Symbol("lisa.route-doc");

/**
 * An answer schema of ./answers.ts, by its name: the module is imported with the document, never by
 * a route, so the API's cold start builds none of them.
 */
export type AnswerName = {
	[K in keyof typeof answers]: (typeof answers)[K] extends z.ZodType ? K : never;
}[keyof typeof answers];

/** An answer: JSON of the schema `schema` names, or a body of `mediaType` the document does not describe. */
export interface Answer {
	description: string;
	schema?: AnswerName;
	mediaType?: string;
}

export interface RouteDoc {
	summary: string;
	description?: string;
	/** Served without a token (GET /api/openapi.json): no security, no 401 or 403. */
	public?: boolean;
	/** What the handler reads itself rather than through a validator. */
	body?: { schema: z.ZodType; required: boolean };
	query?: z.ZodObject;
	headers?: z.ZodObject;
	/** The route's own answers; the token's and the body limit's are added to every /api route. */
	responses: Record<number, Answer>;
}

/** Where a validator reads, and what it reads there. */
export interface ValidatorDoc {
	target: "query" | "param";
	schema: z.ZodObject;
}

export type Marked = { [ROUTE_DOC]?: RouteDoc | ValidatorDoc };

/** The route's mark: put it first in the route's handlers. */
export function routeDoc(doc: RouteDoc): MiddlewareHandler {
	const mark: MiddlewareHandler = (_c, next) => next();
	return Object.assign(mark, { [ROUTE_DOC]: doc });
}

export const answer = (description: string, schema?: AnswerName): Answer => ({
	description,
	schema,
});

/** An `{error, issues?}` answer. */
export const refusal = (description: string): Answer => answer(description, "errorAnswer");

/** The 400 of a route whose `:id` is not a run id (validated by runPath). */
export const BAD_RUN_ID = refusal("A malformed run id (not a ULID)");
export const NO_RUN = refusal("No such run");
