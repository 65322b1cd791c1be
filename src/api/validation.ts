import { zValidator } from "@hono/zod-validator";
import type * as z from "zod";
import { ROUTE_DOC, type ValidatorDoc } from "./route-doc";

/** A request zod refused: 400 with every problem as `path: message` (the zValidator hook too). */
export const validationError = (
	result: { success: boolean; error?: unknown },
	c: { json: (b: unknown, s: 400) => Response },
) => {
	if (!result.success)
		return c.json(
			{
				error: "invalid request",
				issues: (result.error as z.ZodError).issues.map(
					(i) => `${i.path.join(".") || "body"}: ${i.message}`,
				),
			},
			400,
		);
};

/**
 * The route's query or path parameters, validated by `schema` (400 as validationError says), which
 * the OpenAPI document lists as the route's parameters (route-doc.ts).
 */
export function validated<Target extends ValidatorDoc["target"], S extends z.ZodObject>(
	target: Target,
	schema: S,
) {
	const doc: ValidatorDoc = { target, schema };
	return Object.assign(zValidator(target, schema, validationError), { [ROUTE_DOC]: doc });
}
