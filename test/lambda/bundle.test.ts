import { execFile } from "node:child_process";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { builtinModules } from "node:module";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import type { Metafile } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundleLikeSst, outputOf } from "../../bench/sst-esbuild";
import { LAMBDA_RUNTIME } from "../../infra/config";
import { API_TOKEN, httpEvent } from "../support/lambda";

// The entry points bundled as SST bundles them for deploy, then loaded and invoked by a plain Node
// process: what Lambda runs, not the TypeScript sources. (bench/bundle.ts measures these bundles.)

const run = promisify(execFile);
const functions = path.resolve(import.meta.dirname ?? ".", "../../src/functions");
let dir: string;
let outfiles: Record<string, string>;
let metafile: Metafile;

beforeAll(async () => {
	dir = await mkdtemp(path.join(os.tmpdir(), "lisa-bundles-"));
	const files = (await readdir(functions)).filter((f) => f.endsWith(".ts"));
	const entries = Object.fromEntries(
		files.map((f) => [path.basename(f, ".ts"), path.join(functions, f)]),
	);
	({ outfiles, metafile } = await bundleLikeSst(entries, dir, LAMBDA_RUNTIME));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** Runs `script` (an ES module body with `handler` imported from the bundle) in a fresh Node. */
async function inNode(outfile: string, script: string, env: Record<string, string> = {}) {
	const code = `const { handler } = await import(${JSON.stringify(pathToFileURL(outfile).href)});\n${script}`;
	const { stdout } = await run(process.execPath, ["--input-type=module", "-e", code], {
		env: {
			PATH: process.env.PATH,
			AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
			LOG_LEVEL: "silent",
			...env,
		},
	});
	return stdout;
}

describe("Lambda bundles", () => {
	it("bundles every entry point into one ESM file that needs nothing but Node", async () => {
		expect(Object.keys(outfiles).sort()).toEqual([
			"api",
			"ecs-events",
			"events",
			"intake",
			"sweeper",
		]);
		for (const [name, outfile] of Object.entries(outfiles)) {
			// Lambda has no node_modules: only Node's own modules may stay outside the bundle.
			const external = outputOf(metafile, outfile)
				.imports.filter((i) => i.external)
				.map((i) => i.path.replace(/^node:/, ""));
			expect({ name, outside: external.filter((p) => !builtinModules.includes(p)) }).toEqual({
				name,
				outside: [],
			});
			expect(await inNode(outfile, "process.stdout.write(typeof handler);")).toBe("function");
		}
	});

	it("bundles into the API neither a tracker client nor the launcher (docs/architecture.md › Things that bite)", () => {
		const inputs = Object.keys(outputOf(metafile, outfiles.api ?? "").inputs);
		const packages = inputs.map((i) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(i)?.[1]);
		// Linear's webhook verification (@linear/sdk/webhooks) is all of the SDK the API runs.
		expect(inputs.filter((i) => i.includes("/@linear/sdk/") && !i.includes("webhooks"))).toEqual(
			[],
		);
		for (const pkg of ["octokit", "@octokit/core", "@aws-sdk/client-ecs"])
			expect(packages).not.toContain(pkg);
	});

	it("answers HTTP API events from the bundled API, with the token SST links to it", async () => {
		const events = [
			httpEvent("GET", "/healthz"),
			httpEvent("GET", "/api/runs", { headers: { authorization: "Bearer wrong" } }),
		];
		const out = await inNode(
			outfiles.api ?? "",
			`const events = ${JSON.stringify(events)};
			const results = [];
			for (const e of events) results.push(await handler(e));
			process.stdout.write(JSON.stringify(results.map((r) => [r.statusCode, JSON.parse(r.body)])));`,
			{
				SST_RESOURCE_App: JSON.stringify({ name: "lisa", stage: "test" }),
				SST_RESOURCE_ApiToken: JSON.stringify({ value: API_TOKEN }),
			},
		);
		expect(JSON.parse(out)).toEqual([
			[200, { ok: true }],
			[401, { error: "invalid bearer token" }],
		]);
	});

	it("serves the OpenAPI document from the bundled API, its generator imported on the first request", async () => {
		const out = await inNode(
			outfiles.api ?? "",
			`const r = await handler(${JSON.stringify(httpEvent("GET", "/api/openapi.json"))});
			const doc = JSON.parse(r.body);
			process.stdout.write(JSON.stringify([r.statusCode, doc.openapi, Object.keys(doc.paths["/api/runs/{id}"] ?? {})]));`,
		);
		expect(JSON.parse(out)).toEqual([200, "3.1.0", ["get"]]);
	});
});
