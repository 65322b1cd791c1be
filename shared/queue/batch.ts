import type { SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import type { z } from "zod";
import type { Logger } from "../log";

/**
 * A Lambda SQS handler with partial batch failures: each record is parsed with `schema` and handled
 * on its own; the ids of the records that threw are returned so only those are redelivered.
 * A record that does not parse fails too, so it ends in the DLQ where someone can see it.
 */
export function sqsBatchHandler<S extends z.ZodType>(
	schema: S,
	handle: (message: z.infer<S>, record: SQSRecord) => Promise<void>,
	log: Logger,
): (event: SQSEvent) => Promise<SQSBatchResponse> {
	return async (event) => {
		const failures: SQSBatchResponse["batchItemFailures"] = [];
		await Promise.all(
			event.Records.map(async (record) => {
				try {
					let body: unknown;
					try {
						body = JSON.parse(record.body);
					} catch {
						throw new Error("message body is not JSON");
					}
					const parsed = schema.safeParse(body);
					if (!parsed.success) throw new Error(`invalid message: ${parsed.error.message}`);
					await handle(parsed.data, record);
				} catch (err) {
					log.error(
						{
							err,
							messageId: record.messageId,
							receiveCount: record.attributes?.ApproximateReceiveCount,
						},
						"queue message failed; it will be redelivered",
					);
					failures.push({ itemIdentifier: record.messageId });
				}
			}),
		);
		return { batchItemFailures: failures };
	};
}
