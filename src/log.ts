import pino from "pino";
import { redact } from "./domain/redact";

export type Logger = pino.Logger;

export const SECRET_ENV = /(KEY|TOKEN|SECRET|PASSWORD)$/;

/** Values of secret-looking environment variables, redacted from every log line verbatim. */
export function secretValues(env: NodeJS.ProcessEnv = process.env): string[] {
	return Object.entries(env)
		.filter(([k, v]) => SECRET_ENV.test(k) && typeof v === "string" && v.length >= 8)
		.map(([, v]) => v as string);
}

function deepRedact(value: unknown, secrets: string[], depth = 0): unknown {
	if (typeof value === "string") return redact(value, secrets);
	if (depth > 6 || value === null || typeof value !== "object") return value;
	// The formatter sees errors before pino's serializer does: keep them errors (of their class).
	if (value instanceof Error) {
		const copy = Object.create(Object.getPrototypeOf(value)) as Error;
		Object.assign(copy, deepRedact({ ...value }, secrets, depth + 1), {
			message: redact(value.message, secrets),
			stack: value.stack && redact(value.stack, secrets),
		});
		return copy;
	}
	if (Array.isArray(value)) return value.map((v) => deepRedact(v, secrets, depth + 1));
	const out: Record<string, unknown> = {};
	for (const [k, v] of Object.entries(value)) out[k] = deepRedact(v, secrets, depth + 1);
	return out;
}

/**
 * `secrets`: what it redacts, read at each line, so a value learnt later (a minted token, a lease
 * key) is redacted once added to it; the environment's secrets by default.
 */
export function createLogger(
	name: string,
	env: NodeJS.ProcessEnv = process.env,
	secrets: string[] = secretValues(env),
): Logger {
	return pino({
		name,
		level: env.LOG_LEVEL ?? (env.VITEST ? "silent" : "info"),
		redact: {
			paths: ["*.authorization", "*.Authorization", "*.apiKey", "*.token", "*.secret", "headers.*"],
			censor: "[redacted]",
		},
		serializers: { err: pino.stdSerializers.err },
		formatters: { log: (obj) => deepRedact(obj, secrets) as Record<string, unknown> },
		hooks: {
			logMethod(args, method) {
				method.apply(
					this,
					args.map((a) => (typeof a === "string" ? redact(a, secrets) : a)) as Parameters<
						typeof method
					>,
				);
			},
		},
	});
}
