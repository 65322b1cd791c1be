import type { SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import * as z from "zod";
import { isRunId } from "../domain/ids";
import type { Logger } from "../log";

/**
 * Errors that no redelivery can cure: a request DynamoDB refuses as malformed, a value that fails
 * its schema, a programming error. A TypeError with a cause is a network failure (fetch's "fetch
 * failed"), which is transient.
 */
const PERMANENT = new Set([
	"ValidationException",
	"SerializationException",
	"ZodError",
	"TypeError",
	"RangeError",
	"ReferenceError",
	"SyntaxError",
]);

function isPermanentError(err: unknown): boolean {
	if (err instanceof z.ZodError) return true;
	const e = err as { name?: unknown; cause?: unknown } | undefined;
	if (typeof e?.name !== "string" || !PERMANENT.has(e.name)) return false;
	return !(e.name === "TypeError" && e.cause !== undefined);
}

/** What a consumer does about a message that will not be delivered again. */
export interface GivingUp {
	/** A message that does not parse or validate, which names an existing run: say so on its timeline. */
	invalid?(runId: string, reason: string): Promise<void>;
	/** A message whose handling failed for good: fail its run, visibly. */
	failed?(message: unknown, err: unknown): Promise<void>;
}

/** An error as one line, for a log or a run's timeline. */
export const failureText = (err: unknown) =>
	err instanceof z.ZodError
		? err.issues.map((i) => `${i.path.join(".") || "message"}: ${i.message}`).join("; ")
		: `${(err as Error)?.name ?? "Error"}: ${(err as Error)?.message ?? String(err)}`;

/**
 * A Lambda SQS handler with partial batch failures: each record is parsed with `schema` and handled
 * on its own; only the records whose handling failed transiently are returned, to be redelivered. A
 * record that does not parse or validate, or whose handling failed for good (isPermanentError), is
 * logged as an error once and dropped: redelivering it can never succeed, and it would only come
 * back every visibility timeout until the DLQ. `giveUp` makes that visible on the run.
 */
export function sqsBatchHandler<S extends z.ZodType>(
	schema: S,
	handle: (message: z.infer<S>, record: SQSRecord) => Promise<void>,
	log: Logger,
	giveUp: GivingUp = {},
): (event: SQSEvent) => Promise<SQSBatchResponse> {
	return async (event) => {
		const failures: SQSBatchResponse["batchItemFailures"] = [];
		await Promise.all(
			event.Records.map(async (record) => {
				const where = {
					messageId: record.messageId,
					receiveCount: record.attributes?.ApproximateReceiveCount,
				};
				let body: unknown;
				try {
					body = JSON.parse(record.body);
				} catch {
					log.error(where, "queue message is not JSON; dropped");
					return;
				}
				const parsed = schema.safeParse(body);
				if (!parsed.success) {
					const reason = failureText(parsed.error);
					log.error({ ...where, reason }, "queue message is invalid; dropped");
					const runId = (body as { runId?: unknown } | null)?.runId;
					if (isRunId(runId))
						await giveUp.invalid?.(runId, reason).catch((err) => {
							log.warn({ err, runId }, "could not note the dropped message on its run");
						});
					return;
				}
				try {
					await handle(parsed.data, record);
				} catch (err) {
					if (!isPermanentError(err)) {
						log.error({ ...where, err }, "queue message failed; it will be redelivered");
						failures.push({ itemIdentifier: record.messageId });
						return;
					}
					log.error({ ...where, err }, "queue message failed for good; dropped");
					try {
						await giveUp.failed?.(parsed.data, err);
					} catch (failing) {
						// Recording the failure failed: only a transient failure is worth another try.
						if (isPermanentError(failing)) {
							log.error({ ...where, err: failing }, "could not fail the message's run");
							return;
						}
						log.warn({ ...where, err: failing }, "could not fail the run yet; redelivered");
						failures.push({ itemIdentifier: record.messageId });
					}
				}
			}),
		);
		return { batchItemFailures: failures };
	};
}
