import { fileURLToPath } from "node:url";
import { glob } from "tinyglobby";
import { describe, expect, it } from "vitest";
import { EXCLUDE, PROJECTS } from "../../vitest.config";

// Every test file runs in exactly one of vitest's projects (docs/development.md › Tests): none
// would never run under `npm run check` nor be known as slow, two would run twice. Globbed as
// vitest globs them.

const root = fileURLToPath(new URL("../..", import.meta.url));
const files = (include: string[]) => glob(include, { cwd: root, ignore: EXCLUDE, dot: true });

describe("the vitest projects", () => {
	it("take every test file, each in exactly one project", async () => {
		const all = await files(["**/*.test.ts"]);
		const owners = new Map<string, string[]>(all.map((f) => [f, []]));
		for (const [name, include] of Object.entries(PROJECTS))
			for (const f of await files(include)) owners.get(f)?.push(name);
		const wrong = [...owners].filter(([, names]) => names.length !== 1);
		expect(Object.fromEntries(wrong), "files in no project or in several").toEqual({});
		expect(all).toContain("test/architecture/projects.test.ts");
		expect(all.length).toBeGreaterThan(90);
	});

	it("name only files that exist", async () => {
		for (const [name, include] of Object.entries(PROJECTS))
			for (const pattern of include)
				expect((await files([pattern])).length, `${name}: ${pattern}`).toBeGreaterThan(0);
	});
});
