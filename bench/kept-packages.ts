// bench/bundle.ts's reference: the packages the API's deploy is built on, imported as the API imports
// them (its AWS SDK clients and commands, hono with its Lambda adapter, zod), and nothing of Lisa's.
// What the API's cold import takes beyond this is its own code's.

import * as z from "zod";

export { ConditionalCheckFailedException, DynamoDBClient } from "@aws-sdk/client-dynamodb";
export { SendMessageBatchCommand, SendMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
export {
	BatchGetCommand,
	DeleteCommand,
	DynamoDBDocumentClient,
	GetCommand,
	PutCommand,
	QueryCommand,
	UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
export { Hono } from "hono";
export { handle } from "hono/aws-lambda";

/** One schema, as the API builds its own: zod's module is evaluated as the API's is. */
export const probe = z.object({ id: z.string() });
