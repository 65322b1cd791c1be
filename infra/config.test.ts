import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { deployEgressAllowList } from "../src/config/egress";
import { SWEEP } from "../src/pipeline/sweeper";
import {
	deployConfig,
	FUNCTIONS,
	isProduction,
	LAMBDA_RUNTIME,
	QUEUES,
	SWEEP_SCHEDULE,
	visibilityTimeoutSeconds,
} from "./config";

const exists = () => true;
const here = path.dirname(fileURLToPath(import.meta.url));

describe("deploy config", () => {
	it("has defaults that deploy without any variable set", () => {
		expect(deployConfig({}, exists)).toEqual({
			configFile: ".lisa/config.yaml",
			agent: {
				cpu: "2 vCPU",
				memory: "4 GB",
				storage: "30 GB",
				architecture: "x86_64",
				capacity: "fargate",
				egress: "open",
			},
			domain: undefined,
			logRetention: "1 month",
			logLevel: "info",
			corsOrigins: "",
			llm: { baseUrl: undefined, model: undefined },
		});
	});

	it("reads the choices from the deploy environment", () => {
		const c = deployConfig(
			{
				LISA_CONFIG: "deploy/lisa.yaml",
				LISA_AGENT_CPU: "4 vCPU",
				LISA_AGENT_MEMORY: "16 GB",
				LISA_AGENT_CAPACITY: "spot",
				LISA_AGENT_ARCH: "arm64",
				LISA_DOMAIN: "lisa.acme.dev",
				LISA_LLM_BASE_URL: "https://llm.acme.dev/v1",
				LISA_AGENT_EGRESS: "allow-list",
			},
			(f) => f === "deploy/lisa.yaml",
		);
		expect(c).toMatchObject({
			configFile: "deploy/lisa.yaml",
			agent: {
				cpu: "4 vCPU",
				memory: "16 GB",
				capacity: "spot",
				architecture: "arm64",
				egress: "allow-list",
			},
			domain: "lisa.acme.dev",
			llm: { baseUrl: "https://llm.acme.dev/v1" },
		});
	});

	it("refuses what Fargate or SST would reject later, naming the variable", () => {
		expect(() => deployConfig({ LISA_AGENT_CPU: "3 vCPU" }, exists)).toThrow(
			'LISA_AGENT_CPU="3 vCPU" is not supported: use one of 0.25 vCPU, 0.5 vCPU, 1 vCPU, 2 vCPU',
		);
		expect(() => deployConfig({ LISA_AGENT_MEMORY: "4096" }, exists)).toThrow(
			'LISA_AGENT_MEMORY="4096" must look like "4 GB"',
		);
		expect(() => deployConfig({ LISA_AGENT_CAPACITY: "ec2" }, exists)).toThrow(/fargate, spot/);
		expect(() => deployConfig({ LISA_AGENT_EGRESS: "closed" }, exists)).toThrow(
			/LISA_AGENT_EGRESS="closed" .*open, allow-list/,
		);
		expect(() => deployConfig({}, () => false)).toThrow(
			/no Lisa config at \.lisa\/config\.yaml: copy \.lisa\/config\.example\.yaml there/,
		);
	});

	it("allows the AWS tasks the code host, their models' APIs and each repo's network.allow", () => {
		const config = `source: linear
source_config: {team: ENG, label: lisa}
models: ["claude:claude-sonnet-4-5", "opencode:openai/gpt-5", builtin]
repos:
  - {name: api, url: https://github.com/acme/api.git, network: {allow: [registry.npmjs.org]}}
  - {name: web, url: https://github.com/acme/web.git, network: {allow: ["*.corp.example"]}}
`;
		expect(
			deployEgressAllowList(config, "lisa.yaml", {
				LISA_LLM_BASE_URL: "https://llm.acme.dev/v1",
				OPENCODE_OPENAI_BASE_URL: "http://gateway.acme.dev:8080/v1",
				LISA_EGRESS_ALLOW: " pypi.org, files.pythonhosted.org ",
			}),
		).toEqual([
			"github.com:443",
			"api.github.com:443",
			"api.anthropic.com:443",
			"gateway.acme.dev:8080",
			"openrouter.ai:443",
			"llm.acme.dev:443",
			"registry.npmjs.org",
			"*.corp.example",
			"pypi.org",
			"files.pythonhosted.org",
		]);
		// GitHub Enterprise: one host, for git and the API alike.
		const ghe = deployEgressAllowList(config, "lisa.yaml", {
			GITHUB_API_URL: "https://ghe.acme.dev/api/v3",
		});
		expect(ghe.slice(0, 2)).toEqual(["ghe.acme.dev:443", "api.anthropic.com:443"]);
	});

	it("protects production stages only", () => {
		expect([isProduction("prod"), isProduction("production"), isProduction("dev")]).toEqual([
			true,
			true,
			false,
		]);
	});
});

describe("sizing", () => {
	it("gives each queue a visibility timeout longer than its consumer's timeout", () => {
		for (const consumer of [FUNCTIONS.intake, FUNCTIONS.events])
			expect(visibilityTimeoutSeconds(consumer.timeoutSeconds)).toBeGreaterThan(
				consumer.timeoutSeconds,
			);
		// SQS caps visibility at 12 hours and batches at 10 records.
		expect(visibilityTimeoutSeconds(FUNCTIONS.intake.timeoutSeconds)).toBeLessThanOrEqual(43_200);
		expect(FUNCTIONS.events.batchSize).toBeLessThanOrEqual(10);
		expect(QUEUES.maxReceiveCount).toBeGreaterThan(1);
	});

	it("runs Lambda on nodejs22.x or newer", () => {
		expect(Number(/^nodejs(\d+)\.x$/.exec(LAMBDA_RUNTIME)?.[1])).toBeGreaterThanOrEqual(22);
	});

	it("sweeps more often than a silent task is declared lost", () => {
		const minutes = Number(/^rate\((\d+) minutes?\)$/.exec(SWEEP_SCHEDULE)?.[1]);
		expect(minutes * 60_000).toBeLessThanOrEqual(SWEEP.heartbeatTimeoutMs);
	});

	it("points every infra handler at an entry point that exists", () => {
		const handlers = readdirSync(here)
			.filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"))
			.flatMap((f) => [
				...readFileSync(path.join(here, f), "utf8").matchAll(/handler: "([^"]+)\.handler"/g),
			])
			.map((m) => m[1]);
		expect(handlers.sort()).toEqual([
			"src/functions/api",
			"src/functions/ecs-events",
			"src/functions/events",
			"src/functions/intake",
			"src/functions/sweeper",
		]);
		for (const h of handlers)
			expect(readdirSync(path.join(here, "..", "src", "functions"))).toContain(
				`${path.basename(h ?? "")}.ts`,
			);
	});
});
