import { describe, expect, it } from "vitest";
import { parseConfigText } from "./load";
import { ConfigError, parseModelSpec, slugFromUrl } from "./schema";

/** The problems of an invalid config, as the error prints them (`field: message — fix: …`). */
function problemsOf(text: string): string[] {
	try {
		parseConfigText(text, "c.yaml");
	} catch (err) {
		if (err instanceof ConfigError)
			return err.problems.map((p) => `${p.field}: ${p.message} — fix: ${p.fix}`);
		throw err;
	}
	throw new Error("the config was valid");
}

const minimal = `
repos:
  - name: api
    url: https://github.com/acme/api.git
`;

describe("config", () => {
	it("fills the hosted defaults (docs/config.md › Config)", () => {
		const c = parseConfigText(minimal, "c.yaml");
		expect(c.source).toBe("linear");
		expect(c.provider).toBe("claude");
		expect(c.models).toEqual(["claude"]);
		expect(c.source_config).toMatchObject({
			label: "lisa",
			pick_from: "Todo",
			in_progress: "In Progress",
			done: "In Review",
			remove_label: true,
		});
		expect(c.base_branch).toBe("main");
		expect(c.branch_prefix).toBe("feat/");
		expect(c.limits).toEqual({
			max_concurrent_runs: 5,
			step_timeout_minutes: 60,
			max_attempts: 3,
			max_validation_retries: 2,
			stale_output_seconds: 240,
			parallel_steps: 1,
			retry_backoff_seconds: 10,
			max_run_cost_usd: 10,
			approval_timeout_hours: 72,
		});
		expect(c.pricing).toEqual({});
		expect(c.compute_pricing).toEqual({ vcpu_hour: 0.04048, gb_hour: 0.004445, ipv4_hour: 0.005 });
		expect(c.repos[0]).toMatchObject({
			name: "api",
			slug: "acme/api",
			base_branch: "main",
			setup: [],
			validate: [],
		});
	});

	it("accepts the original CLI's fields and old aliases", () => {
		const c = parseConfigText(
			`
provider: gemini
source: trello
source_config:
  board: Web
  list: Ready
  active_status: Doing
  done_status: Code Review
workflow: worktree
github: token
loop: { cooldown: 10, max_sessions: 0 }
base_branch: develop
repos:
  - name: web
    path: ./web
    match: [web]
    lifecycle: { setup: ["npm ci"] }
`,
			"/work/proj/.lisa/config.yaml",
		);
		expect(c.models).toEqual(["gemini"]);
		expect(c.source_config).toMatchObject({
			team: "Web",
			project: "Ready",
			pick_from: "Ready",
			in_progress: "Doing",
			done: "Code Review",
		});
		expect(c.repos[0]).toMatchObject({
			url: "file:///work/proj/.lisa/web",
			base_branch: "develop",
			setup: ["npm ci"],
			match: ["web"],
		});
	});

	it("accepts a single command string and provider:model chains", () => {
		const c = parseConfigText(
			`models: ["claude:opus", gemini, builtin]\nrepos: [{name: a, url: "git@github.com:o/a.git", validate: "npm test"}]`,
			"c.yaml",
		);
		expect(c.models).toEqual(["claude:opus", "gemini", "builtin"]);
		expect(c.repos[0]?.validate).toEqual(["npm test"]);
		expect(c.repos[0]?.slug).toBe("o/a");
	});

	it("names the field and the fix", () => {
		const err = (() => {
			try {
				parseConfigText(
					`provider: gpt\nmodels: [foo]\nrepos: [{name: "a b"}]\nlimits: {max_attempts: 0}`,
					"c.yaml",
				);
			} catch (e) {
				return e as ConfigError;
			}
		})();
		expect(err).toBeInstanceOf(ConfigError);
		const fields = err?.problems.map((p) => p.field);
		expect(fields).toEqual(
			expect.arrayContaining([
				"provider",
				"models.0",
				"repos.0.name",
				"repos.0.url",
				"limits.max_attempts",
			]),
		);
		expect(err?.message).toMatch(/repos\.0\.url: .* — fix: set `url:` to any git URL/);
		expect(err?.message).toMatch(
			/provider: .* — fix: use one of claude, gemini, opencode, codex, builtin/,
		);
	});

	it("requires at least one repo and reports YAML syntax errors with the line", () => {
		expect(() => parseConfigText("source: linear", "c.yaml")).toThrow(
			/repos: .*fix: add at least one repository/,
		);
		expect(() => parseConfigText("repos:\n  - name: a\n   url: x", "c.yaml")).toThrow(/line 3/);
	});

	it("refuses misspelled keys at every level, naming the nearest valid one", () => {
		const problems = problemsOf(`
lable: lisa
valdiate: ["npm test"]
limits: {max_attemps: 5}
source_config: {lable: lisa}
comments: {enabeld: true}
follow_up: {rewiews: false}
pricing: {"claude:x": {input: 1, output: 2, cach_read: 1}}
zzzzzz: 1
repos:
  - name: api
    url: https://github.com/acme/api.git
    valdiate: ["npm test"]
    follow_up: {max_round: 1}
`);
		expect(problems).toEqual(
			expect.arrayContaining([
				"lable: unknown key — fix: did you mean `source_config.label`? (it belongs there, not here)",
				"valdiate: unknown key — fix: did you mean `repos[].validate`? (it belongs there, not here)",
				"limits.max_attemps: unknown key — fix: did you mean `max_attempts`?",
				"source_config.lable: unknown key — fix: did you mean `label`?",
				"comments.enabeld: unknown key — fix: did you mean `enabled`?",
				"follow_up.rewiews: unknown key — fix: did you mean `reviews`?",
				"pricing.claude:x.cach_read: unknown key — fix: did you mean `cache_read`?",
				"repos.0.valdiate: unknown key — fix: did you mean `validate`?",
				"repos.0.follow_up.max_round: unknown key — fix: did you mean `max_rounds`?",
			]),
		);
		expect(problems.find((p) => p.startsWith("zzzzzz:"))).toMatch(
			/remove it; valid keys here: source, provider, models, .*repos, limits/,
		);
		expect(problems).toHaveLength(10);
		const empty = problemsOf(`${minimal}"": 1\nlimits: {"": 2}`);
		expect(empty).toHaveLength(2);
		expect(empty).toEqual(
			expect.arrayContaining([
				expect.stringMatching(/^"": unknown key — fix: remove it; valid keys here: source, /),
				expect.stringMatching(/^limits\."": unknown key — fix: remove it; valid keys here: max_/),
			]),
		);
	});

	it("still accepts every key it accepts as an alias (the original CLI's)", () => {
		const c = parseConfigText(
			`github: t\nloop: {a: 1}\nlogs: x\nworkflow: branch
source_config: {board: a, list: b, initial_status: c, active_status: d, done_status: e}
repos: [{name: a, path: ./x, lifecycle: {setup: [make]}}]`,
			"/p/c.yaml",
		);
		expect(c.workflow).toBe("branch");
		expect(c.source_config).toMatchObject({ team: "a", project: "b", pick_from: "c", done: "e" });
		expect(c.repos[0]).toMatchObject({ url: "file:///p/x", setup: ["make"] });
		expect(() =>
			parseConfigText(`${minimal}source_config: {scope: x, team: y}`, "c.yaml"),
		).not.toThrow();
	});

	it("says what to write for a value of the wrong type, and a YAML error's position once", () => {
		expect(problemsOf(`${minimal}comments: {enabled: "yes"}`)).toEqual([
			"comments.enabled: Invalid input: expected boolean, received string — fix: write true or false, without quotes",
		]);
		const [yaml] = problemsOf("repos:\n  - name: a\n   url: x");
		expect(yaml).toMatch(/^line 3, column \d+: .* — fix: check the indentation/);
		expect(yaml?.match(/line 3/g)).toHaveLength(1);
	});

	it("derives slugs only from GitHub-style URLs", () => {
		expect(slugFromUrl("https://github.com/acme/api.git")).toBe("acme/api");
		expect(slugFromUrl("https://github.example.com/acme/api")).toBe("acme/api");
		expect(slugFromUrl("ssh://git@github.com/acme/api.git")).toBe("acme/api");
		expect(slugFromUrl("file:///tmp/x/api.git")).toBeUndefined();
	});

	it("takes the hosts a repository's agent may reach, and says what a host pattern is", () => {
		const text = (allow: string) =>
			`source: linear\nsource_config: {team: ENG, label: lisa}\nrepos:\n  - {name: a, url: https://github.com/acme/a.git, network: {allow: ${allow}}}`;
		const c = parseConfigText(text('[Registry.NPMjs.org., "*.corp.example", 10.0.0.5]'), "c.yaml");
		expect(c.repos[0]?.network.allow).toEqual(["registry.npmjs.org", "*.corp.example", "10.0.0.5"]);
		expect(parseConfigText(minimal, "c.yaml").repos[0]?.network.allow).toEqual([]);
		expect(problemsOf(text('["https://pypi.org"]'))).toEqual([
			expect.stringMatching(
				/^repos\.0\.network\.allow\.0: use a host name, an IP address or \*\.domain/,
			),
		]);
	});

	it("takes source_config.scope as the team when team is not given", () => {
		const c = parseConfigText(`source_config: {scope: acme/api}\n${minimal}`, "c.yaml");
		expect(c.source_config.team).toBe("acme/api");
	});
});

describe("models entries", () => {
	it("parses provider and provider:model specs", () => {
		expect(parseModelSpec("claude")).toEqual({ spec: "claude", provider: "claude" });
		expect(parseModelSpec("opencode:anthropic/claude-sonnet-4-5")).toEqual({
			spec: "opencode:anthropic/claude-sonnet-4-5",
			provider: "opencode",
			model: "anthropic/claude-sonnet-4-5",
		});
		expect(() => parseModelSpec("cursor")).toThrow(/unknown provider/);
	});

	it("the config accepts exactly the entries the parser reads", () => {
		const withModels = (m: string) =>
			parseConfigText(`${minimal}models: [${JSON.stringify(m)}]\n`, "c.yaml");
		for (const ok of ["claude", "codex:gpt-5", "opencode:anthropic/claude-sonnet-4-5", "claude:"]) {
			expect(withModels(ok).models).toEqual([ok]);
			expect(() => parseModelSpec(ok)).not.toThrow();
		}
		for (const bad of ["cursor", "cursor:x", ":claude", "Claude"]) {
			expect(() => withModels(bad)).toThrow(/provider/);
			expect(() => parseModelSpec(bad)).toThrow(/unknown provider/);
		}
	});
});
