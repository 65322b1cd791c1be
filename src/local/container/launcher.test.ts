import { describe, expect, it } from "vitest";
import { readSettings } from "../../config/settings";
import { createLogger } from "../../log";
import type { AgentUidPool } from "../agent-users";
import { ContainerLauncher, describeEnd, localRemotes } from "./launcher";
import { hostUlimits } from "./runtime";
import { taskSize } from "./setup";

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max processes             96364                96364                processes
Max open files            1024                 20000                files
`;

describe("the container runtime's limits", () => {
	it("asks for no more than the host's hard limits, and no more processes than pid_max", () => {
		expect(hostUlimits(LIMITS, 32768)).toEqual([
			"--ulimit",
			"nofile=20000:20000",
			"--ulimit",
			"nproc=32768:32768",
		]);
		expect(hostUlimits(LIMITS.replace("20000", "unlimited"), 4194304)).toEqual([
			"--ulimit",
			"nofile=1048576:1048576",
			"--ulimit",
			"nproc=96364:96364",
		]);
	});
});

describe("a container's end", () => {
	const size = { vcpu: 2, memoryMiB: 4096 };
	it("says out of memory when the kernel killed it at its limit", () => {
		expect(describeEnd({ ExitCode: 137, OOMKilled: true }, size)).toBe(
			"out of memory: the task reached its memory limit of 4096 MiB (exit code 137)",
		);
	});
	it("says the exit code and the runtime's error otherwise", () => {
		expect(describeEnd({ ExitCode: 1 }, size)).toBe("exit code 1");
		expect(describeEnd({ ExitCode: 127, Error: "no such file" }, size)).toBe(
			"exit code 127: no such file",
		);
	});
});

describe("the task's size", () => {
	it("is the AWS deploy's (LISA_AGENT_CPU, LISA_AGENT_MEMORY), 2 vCPU and 4 GB by default", () => {
		expect(taskSize({})).toEqual({ vcpu: 2, memoryMiB: 4096 });
		expect(taskSize({ LISA_AGENT_CPU: "0.5 vCPU", LISA_AGENT_MEMORY: "0.25 GB" })).toEqual({
			vcpu: 0.5,
			memoryMiB: 256,
		});
		expect(() => taskSize({ LISA_AGENT_MEMORY: "4096" })).toThrow(
			'LISA_AGENT_MEMORY="4096" must look like "4 GB"',
		);
		expect(() => taskSize({ LISA_AGENT_CPU: "3 vCPU" })).toThrow(
			'LISA_AGENT_CPU="3 vCPU" is not supported',
		);
	});
});

describe("what a container is given", () => {
	const req = {
		runId: "01JABCDEFGHJKMNPQRSTVWXYZ0",
		stepIndex: 1,
		attempt: 2,
		repos: [
			{ name: "api", url: "file:///srv/git/api.git" },
			{ name: "web", url: "https://github.com/acme/web.git" },
			{ name: "lib", url: "/srv/git/lib.git" },
		],
	};
	const settings = {
		...readSettings({}),
		dataDir: "/tmp/lisa-data",
		eventsQueueUrl: "http://127.0.0.1:9/events",
		localAccessKey: "LISAKEY0123456789",
	};
	const launcher = new ContainerLauncher(
		settings,
		{
			PATH: "/host/bin",
			HOME: "/root",
			GITHUB_TOKEN: "ghp_secret",
			ANTHROPIC_API_KEY: "sk-ant-secret",
			ANTHROPIC_CUSTOM_HEADERS: "x-api-key: sk-ant-header",
			LISA_LLM_BASE_URL: "http://127.0.0.1:8/v1",
			SOMETHING_ELSE: "not passed",
		},
		createLogger("test", { LOG_LEVEL: "silent" }),
		{
			runtime: { name: "podman", global: [], limits: [] },
			image: "localhost/lisa-agent:latest",
			clis: ["claude", "codex"],
			uids: {} as AgentUidPool,
			size: { vcpu: 2, memoryMiB: 4096 },
			pidsLimit: 4096,
			stack: "0123456789",
		},
	);

	it("shows only the contract's ids and endpoints; the rest goes in the secret file", () => {
		const { shown, secret } = launcher.environment(req, 64003);
		expect(shown).toEqual({
			LISA_RUN_ID: req.runId,
			LISA_STEP_INDEX: "1",
			LISA_ATTEMPT: "2",
			LISA_TABLE_NAME: settings.tableName,
			LISA_EVENTS_QUEUE_URL: "http://127.0.0.1:9/events",
			AWS_REGION: settings.region,
			LISA_AGENT_UID: "64003",
			LISA_AGENT_GID: "64003",
			LISA_AGENT_HOME: "",
			// Its agent gets a network of its own (docs/security.md › Security).
			LISA_AGENT_NETWORK: "allow-list",
		});
		expect(secret).toEqual({
			GITHUB_TOKEN: "ghp_secret",
			ANTHROPIC_API_KEY: "sk-ant-secret",
			// Not named like a secret, and still one: a provider's headers may carry a key.
			ANTHROPIC_CUSTOM_HEADERS: "x-api-key: sk-ant-header",
			LISA_LLM_BASE_URL: "http://127.0.0.1:8/v1",
			LISA_LOCAL_AWS_KEY: "LISAKEY0123456789",
			LISA_REPOS: JSON.stringify(req.repos),
		});
	});

	it("is named for its run, step and attempt, and mounts only the step's local remotes", () => {
		expect(launcher.nameOf(req)).toBe(`lisa-0123456789-${req.runId}-step-1-attempt-2`);
		expect(() => launcher.nameOf({ ...req, runId: "../../etc" })).toThrow("invalid run id");
		expect(localRemotes(req)).toEqual(["/srv/git/api.git", "/srv/git/lib.git"]);
	});
});
