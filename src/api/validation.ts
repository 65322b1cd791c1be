import type * as z from "zod";

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
