/**
 * Executes GraphQL documents against Linear's public SDL with the double's resolvers.
 *
 * Documents are parsed and executed but not validated: @linear/sdk may select fields newer than the
 * SDL, and graphql-js skips those silently. Fields the resolvers do not cover get type-appropriate
 * defaults (non-null) or null, so the SDK's large fragments resolve. Unknown root fields, root
 * fields without a resolver and input fields outside the SDL are errors.
 */
import { readFileSync } from "node:fs";
import {
	buildSchema,
	execute,
	GraphQLError,
	type GraphQLFieldResolver,
	type GraphQLOutputType,
	type GraphQLSchema,
	type GraphQLTypeResolver,
	getNullableType,
	isEnumType,
	isInterfaceType,
	isListType,
	isNonNullType,
	isObjectType,
	isUnionType,
	Kind,
	type OperationDefinitionNode,
	parse,
} from "graphql";
import { type LinearErrorExtensions, notImplemented } from "./errors";
import type { Context, Resolvers } from "./resolvers";

let cachedSchema: GraphQLSchema | undefined;

/** Linear's public schema, built once per process. */
export function linearSchema(): GraphQLSchema {
	cachedSchema ??= buildSchema(readFileSync(new URL("./schema.graphql", import.meta.url), "utf8"), {
		assumeValidSDL: true,
	});
	return cachedSchema;
}

const EPOCH = "1970-01-01T00:00:00.000Z";

/** The value a field gets when the data has none. */
function defaultFor(type: GraphQLOutputType): unknown {
	if (!isNonNullType(type)) return null;
	const inner = getNullableType(type);
	if (isListType(inner)) return [];
	if (isEnumType(inner)) return inner.getValues()[0]?.value ?? null;
	if (isObjectType(inner)) return {};
	if (isInterfaceType(inner) || isUnionType(inner)) return {};
	switch (inner.name) {
		case "String":
		case "ID":
			return "";
		case "Int":
		case "Float":
			return 0;
		case "Boolean":
			return false;
		case "DateTime":
		case "DateTimeOrDuration":
			return EPOCH;
		case "TimelessDate":
		case "TimelessDateOrDuration":
			return "1970-01-01";
		case "JSON":
		case "JSONObject":
			return {};
		default:
			return "";
	}
}

function isRecord(value: unknown): value is Record<string, unknown> {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}

function makeFieldResolver(resolvers: Resolvers): GraphQLFieldResolver<unknown, Context> {
	return (source, args, ctx, info) => {
		const resolver = resolvers[info.parentType.name]?.[info.fieldName];
		if (resolver) {
			const value = resolver(source as never, args, ctx);
			return value === undefined ? defaultFor(info.returnType) : value;
		}
		if (info.parentType === info.schema.getQueryType()) throw notImplemented(info.fieldName);
		if (info.parentType === info.schema.getMutationType()) throw notImplemented(info.fieldName);
		const value = isRecord(source) ? source[info.fieldName] : undefined;
		if (value === undefined || (value === null && isNonNullType(info.returnType)))
			return defaultFor(info.returnType);
		return value;
	};
}

const AGENT_CONTENT_TYPES: Record<string, string> = {
	action: "AgentActivityActionContent",
	elicitation: "AgentActivityElicitationContent",
	error: "AgentActivityErrorContent",
	prompt: "AgentActivityPromptContent",
	response: "AgentActivityResponseContent",
	thought: "AgentActivityThoughtContent",
};

const typeResolver: GraphQLTypeResolver<unknown, Context> = (value, _ctx, info, abstractType) => {
	if (isRecord(value) && typeof value.__typename === "string") return value.__typename;
	if (abstractType.name === "AgentActivityContent" && isRecord(value))
		return AGENT_CONTENT_TYPES[String(value.type)];
	return info.schema.getPossibleTypes(abstractType)[0]?.name;
};

interface GraphQLErrorJson {
	message: string;
	path?: readonly (string | number)[];
	locations?: readonly { line: number; column: number }[];
	extensions?: LinearErrorExtensions | Record<string, unknown>;
}

export interface GraphQLResponse {
	status: number;
	body: { data?: unknown; errors?: GraphQLErrorJson[] };
	operationName?: string;
}

interface ErrorLike {
	message: string;
	path?: readonly (string | number)[];
	locations?: readonly { line: number; column: number }[];
	extensions?: Record<string, unknown>;
}

function errorJson(error: ErrorLike): GraphQLErrorJson {
	const extensions = error.extensions && Object.keys(error.extensions).length > 0;
	return {
		message: error.message,
		...(error.path ? { path: error.path } : {}),
		...(error.locations ? { locations: error.locations } : {}),
		extensions: extensions
			? { ...error.extensions }
			: { type: "graphql error", code: "GRAPHQL_ERROR", statusCode: 400 },
	};
}

function failure(status: number, errors: GraphQLErrorJson[], op?: string): GraphQLResponse {
	return { status, body: { errors }, operationName: op };
}

export async function executeGraphQL(
	resolvers: Resolvers,
	ctx: Context,
	request: { query: string; variables?: Record<string, unknown> | null; operationName?: string },
): Promise<GraphQLResponse> {
	const schema = linearSchema();
	let document: ReturnType<typeof parse>;
	try {
		document = parse(request.query);
	} catch (err) {
		const e = err instanceof GraphQLError ? err : new GraphQLError(String(err));
		return failure(400, [
			{
				...errorJson(e),
				extensions: { type: "graphql error", code: "GRAPHQL_PARSE_FAILED", statusCode: 400 },
			},
		]);
	}
	const operations = document.definitions.filter(
		(d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
	);
	const operation = request.operationName
		? operations.find((o) => o.name?.value === request.operationName)
		: operations[0];
	const operationName = operation?.name?.value;
	if (!operation) return failure(400, [{ message: "No operation to execute" }]);
	const root =
		operation.operation === "mutation" ? schema.getMutationType() : schema.getQueryType();
	if (!root || operation.operation === "subscription")
		return failure(400, [errorJson(notImplemented(`${operation.operation} operations`))]);

	// Root fields outside the SDL would be skipped silently by execute(): report them.
	const unknown = operation.selectionSet.selections.flatMap((s) =>
		s.kind === Kind.FIELD && !s.name.value.startsWith("__") && !root.getFields()[s.name.value]
			? [s.name.value]
			: [],
	);
	if (unknown.length > 0)
		return failure(
			400,
			unknown.map((f) => errorJson(notImplemented(`${f} (not in the SDL)`))),
			operationName,
		);

	const result = await execute({
		schema,
		document,
		operationName,
		variableValues: request.variables ?? {},
		contextValue: ctx,
		fieldResolver: makeFieldResolver(resolvers),
		typeResolver,
	});
	const errors = result.errors?.map(errorJson);
	// A request that failed as a whole is answered with its first error's status code.
	const statusCode = errors?.[0]?.extensions?.statusCode;
	const status = result.data == null ? (typeof statusCode === "number" ? statusCode : 400) : 200;
	return {
		status,
		body: { data: result.data ?? null, ...(errors ? { errors } : {}) },
		operationName,
	};
}
