import { defineConfig } from "vitest/config";

// Three projects (docs/development.md › Tests): `npm test` runs them all, `npm run check` only
// `unit`. Every test file belongs to exactly one; test/architecture/projects.test.ts holds them to
// it.

/** Pure logic: no process, server, port, git or database. */
const unit = [
	"infra/**/*.test.ts",
	"src/domain/**/*.test.ts",
	"src/config/**/*.test.ts",
	"src/api/**/*.test.ts",
	"src/cli/**/*.test.ts",
	"src/launcher/**/*.test.ts",
	"src/local/**/*.test.ts",
	"src/integrations/*/trigger.test.ts",
	"src/integrations/linear/session*.test.ts",
	"src/integrations/trello/webhook.test.ts",
	"src/task/agents/{fallback,supervision}.test.ts",
	"src/task/agents/builtin/protocol.test.ts",
	"src/task/agents/providers/{prepare,status}.test.ts",
	"src/task/prompts/{prompt,epic-prompt}.test.ts",
	"test/architecture/pointers.test.ts",
	"test/architecture/projects.test.ts",
];

/** One real part at a time: dynalite, fauxqs, git, a tracker double, an agent CLI, a server. */
const adapter = [
	"src/store/**/*.test.ts",
	"src/queue/**/*.test.ts",
	"src/integrations/*/{client,issues,actor,epics}.test.ts",
	"src/integrations/github/pulls/client.test.ts",
	"src/runtime/**/*.test.ts",
	"src/task/agents/builtin/agent.test.ts",
	"src/task/agents/providers/{claude,codex,gemini,opencode,flags}.test.ts",
	"src/task/broker/**/*.test.ts",
	"src/task/egress/proxy.test.ts",
	"src/task/context/token.test.ts",
	"src/task/sandbox/{workspace,worktree-cleanup}.test.ts",
	"test/doubles/**/*.test.ts",
	"test/architecture/layers.test.ts",
];

/** The pipeline, the agent task or the stack end to end, with processes of their own. */
const e2e = [
	"test/{e2e,lambda,adversarial,container}/**/*.test.ts",
	"src/pipeline/**/*.test.ts",
	"src/task/bundle.test.ts",
	"src/task/egress/service.test.ts",
	"src/task/agents/{budget-watch,chain,supervise}.test.ts",
	"src/task/attempt/superseded.test.ts",
	"src/task/sandbox/{identity,isolation,permissions,processes}.test.ts",
	"src/task/steps/{checks,follow-up,plan,epic-phases}.test.ts",
];

export const EXCLUDE = ["**/node_modules/**", ".sst/**"];
export const PROJECTS = { unit, adapter, e2e };

export default defineConfig({
	test: {
		exclude: EXCLUDE,
		testTimeout: 60_000,
		hookTimeout: 60_000,
		// End-to-end suites spawn real processes and servers; two workers suit a 2-core machine.
		maxWorkers: 2,
		// The pinned AWS SDK warns about its future Node floor on every process; it changes nothing here.
		env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true" },
		projects: Object.entries(PROJECTS).map(([name, include]) => ({
			extends: true,
			test: {
				name,
				include,
				// A live page redraws once a second; the default 1 s poll can miss a tick on a busy machine.
				...(name === "e2e" ? { expect: { poll: { timeout: 10_000 } } } : {}),
			},
		})),
	},
});
