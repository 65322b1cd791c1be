import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { parseConfigText } from "../config/load";
import { configSchema, SOURCES } from "../config/schema";
import { configTemplate } from "./init";

// The one template (.lisa/config.example.yaml) stays complete: every field of the schema is in it.

function fields(schema: z.ZodType, prefix = ""): string[] {
	let s: z.ZodType = schema;
	while (s instanceof z.ZodDefault || s instanceof z.ZodOptional || s instanceof z.ZodPipe)
		s = s instanceof z.ZodPipe ? (s.in as z.ZodType) : (s.unwrap() as z.ZodType);
	if (s instanceof z.ZodArray) return fields(s.element as z.ZodType, prefix);
	if (!(s instanceof z.ZodObject)) return [];
	return Object.entries(s.shape).flatMap(([k, v]) => [
		`${prefix}${k}`,
		...fields(v as z.ZodType, `${prefix}${k}.`),
	]);
}

describe("the config template", () => {
	const example = readFileSync(new URL("../../.lisa/config.example.yaml", import.meta.url), "utf8");

	it("is the example file itself for Linear", () => {
		expect(configTemplate("linear")).toBe(example);
	});

	it("names every field of the schema, each with a comment", () => {
		const all = fields(configSchema);
		expect(all).toContain("repos.native_worktree");
		expect(all).toContain("limits.parallel_steps");
		for (const field of all) {
			const key = field.split(".").at(-1) as string;
			const line = example.split("\n").find((l) => new RegExp(`^[\\s#-]*${key}:`).test(l));
			expect(line, field).toBeDefined();
			expect(line?.includes("#") || /^\s*\w+:\s*$/.test(line ?? ""), field).toBe(true);
		}
	});

	it("loads for every source", () => {
		for (const source of SOURCES)
			expect(parseConfigText(configTemplate(source), "c.yaml").source).toBe(source);
	});
});
