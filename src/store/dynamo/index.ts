// The DynamoDB adapter behind the store port (src/store/index.ts): one table, one module per store.
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import type { Store } from "..";
import { DynamoTable, type RequestObserver } from "./client";
import { dynamoCoordination } from "./coordination";
import { dynamoDeliveries } from "./deliveries";
import { dynamoGuardrails } from "./guardrails";
import { dynamoPullRequests } from "./pull-requests";
import { dynamoRuns } from "./runs";
import { dynamoSpend } from "./spend";
import { dynamoStats } from "./stats";
import { dynamoStepTokens } from "./step-tokens";
import { dynamoTimeline } from "./timeline";

/** The store, plus a way to see its requests (the request-count tests and benches). */
export type DynamoStore = Store & { observe(observer: RequestObserver): () => void };

export function dynamoStore(doc: DynamoDBDocumentClient, table: string): DynamoStore {
	const t = new DynamoTable(doc, table);
	return {
		...dynamoRuns(t),
		...dynamoTimeline(t),
		...dynamoGuardrails(t),
		...dynamoCoordination(t),
		...dynamoDeliveries(t),
		...dynamoStepTokens(t),
		...dynamoPullRequests(t),
		...dynamoSpend(t),
		...dynamoStats(t),
		observe: (observer) => t.observe(observer),
	};
}
