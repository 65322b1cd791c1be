import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { ScanCommand } from "@aws-sdk/lib-dynamodb";
import { Octokit } from "octokit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Settings } from "../../src/config/settings";
import { awsClients } from "../../src/runtime/aws";
import type { TokenScope } from "../doubles/github/app-auth";
import type { GitHubIssue } from "../doubles/github/server";
import { issuesEvent } from "../doubles/github/webhook";
import { git } from "../support/git";
import { statusOf } from "../support/octokit";
import { createStackWorld, type StackWorld } from "../support/stack";

// Lisa as a GitHub App (docs/trackers.md › As a GitHub App (a token per step)): no long-lived token
// anywhere near a task. The pipeline mints each attempt a token for its repository and what the
// step does there, keeps it in the store for that task alone, and the task takes it. A hostile
// agent of the task's own user looks for it in every process it can read; the token, once out, is
// tried on another repository.

const REPO = "acme/api";
let w: StackWorld;

beforeAll(async () => {
	w = await createStackWorld({
		source: "github",
		githubApp: true,
		gitHttp: true,
		moreRepos: ["web"],
		// The agent as the task's own user: the worst case for what it can read of the task.
		env: { LISA_AGENT_UIDS: "off" },
		config: ({ repos }) => `source: github
source_config: {team: acme/api, label: lisa, pick_from: open, in_progress: in progress, done: in review}
provider: claude
limits: {max_attempts: 1}
repos:
  - name: api
    url: ${repos.api?.url}
    slug: acme/api
`,
	});
});
afterAll(() => w?.stop());

/** The table's items of minted tokens not taken yet. */
async function tokenItems(): Promise<unknown[]> {
	const settings = w.stack?.settings as Settings;
	const { Items } = await awsClients(settings).doc.send(
		new ScanCommand({
			TableName: settings.tableName,
			FilterExpression: "begins_with(pk, :token)",
			ExpressionAttributeValues: { ":token": "TOKEN#" },
		}),
	);
	return Items ?? [];
}

/** The tokens the double minted for one step: asked with a repository list. */
const stepTokens = (): [string, TokenScope][] =>
	w.github.installationTokens.minted().filter(([, scope]) => scope.repos?.size === 1);

describe("a GitHub App's step tokens, against a hostile agent", () => {
	let token = "";
	let runId = "";

	it("runs a step with a token minted for its repository alone, which no process of the task's user shows", async () => {
		expect(w.env.GITHUB_TOKEN).toBeUndefined();
		const issue: GitHubIssue = w.github.addIssue(REPO, {
			title: "Add a health check",
			body: "lisa-fake: scan-secrets",
			labels: ["lisa"],
			user: "ada",
		});
		const res = await w.sendGitHub(
			"issues",
			issuesEvent(w.github, REPO, issue, { label: "lisa", sender: "ada" }),
		);
		({ runId } = (await res.json()) as { runId: string });
		const run = await w.waitForRun(runId);
		expect(run.status, JSON.stringify(run)).toBe("succeeded");
		const pr = w.github.pulls(REPO).find((p) => p.body?.includes(runId));
		expect(run.prUrls).toEqual([pr?.html_url]);
		expect(
			(w.gitHttp?.requests ?? []).some((r) => r.authorized && r.url.includes("git-receive-pack")),
		).toBe(true);

		const minted = stepTokens();
		expect(minted.map(([, s]) => [[...(s.repos ?? [])], s.permissions])).toEqual([
			[[REPO], { contents: "write", pull_requests: "write" }],
		]);
		token = minted[0]?.[0] ?? "";
		// Taken by its task, under a nonce only its launch knew: nothing is left in the table.
		expect(await tokenItems()).toEqual([]);
		// The agent read every /proc/<pid>/environ of its user, the task's too: not the token.
		const [call] = await w.agents.callsOf(runId);
		const scan = (await w.agents.scans()).find((s) => s.uid === call?.uid);
		expect(scan?.readable).toBeGreaterThan(0);
		expect(JSON.stringify(scan)).not.toContain(token);
		expect(JSON.stringify(await w.agents.calls())).not.toContain(token);
		const { body } = await w.api(`/api/runs/${runId}/events?limit=500`);
		expect(JSON.stringify(body)).not.toContain(token);
	});

	it("fails a step whose repository the App is not installed on at its launch, with GitHub's reason, on the run and the issue", async () => {
		const installed = w.github.app?.installation as { repos: string[] };
		const repos = installed.repos;
		installed.repos = repos.filter((r) => r !== REPO);
		try {
			const issue = w.github.addIssue(REPO, { title: "Add a ping", labels: ["lisa"], user: "ada" });
			const res = await w.sendGitHub(
				"issues",
				issuesEvent(w.github, REPO, issue, { label: "lisa", sender: "ada" }),
			);
			const { runId: failed } = (await res.json()) as { runId: string };
			const run = await w.waitForRun(failed);
			expect(run.status).toBe("failed");
			const why =
				"could not launch the agent task: the GitHub App could not mint the step's token: There is at least one repository that does not exist or is not accessible to the parent installation.";
			expect(run.steps[0]?.error).toContain(why);
			const { body } = await w.api<{ events: { type: string; message: string }[] }>(
				`/api/runs/${failed}/events?limit=500`,
			);
			expect(
				body.events.filter((e) => e.type === "step.launch_failed").map((e) => e.message),
			).toEqual([expect.stringContaining(why)]);
			await expect
				.poll(() =>
					w.github
						.comments(REPO, issue.number)
						.map((c) => c.body)
						.join("\n"),
				)
				.toContain("not accessible to the parent installation");
			expect(await tokenItems()).toEqual([]);
		} finally {
			installed.repos = repos;
		}
	});

	it("holds the step's token to its repository and what the step does: another repository does not exist for it", async () => {
		expect(token).toMatch(/^ghs_/);
		const octokit = new Octokit({ auth: token, baseUrl: w.github.url });
		expect(await statusOf(octokit.rest.pulls.list({ owner: "acme", repo: "api" }))).toBe(200);
		expect(await statusOf(octokit.rest.repos.get({ owner: "acme", repo: "web" }))).toBe(404);
		expect(
			await statusOf(
				octokit.rest.pulls.create({
					owner: "acme",
					repo: "web",
					head: "x",
					base: "main",
					title: "x",
				}),
			),
		).toBe(404);
		// Nor may it do on its own repository what the step does not: label issues, read CI.
		expect(
			await statusOf(
				octokit.rest.issues.addLabels({
					owner: "acme",
					repo: "api",
					issue_number: 1,
					labels: ["x"],
				}),
			),
		).toBe(403);
		expect(
			await statusOf(octokit.rest.checks.listForRef({ owner: "acme", repo: "api", ref: "main" })),
		).toBe(403);

		// Over git: it fetches its repository and pushes nowhere else.
		const remote = (name: string) =>
			`${(w.gitHttp?.url ?? "").replace("http://", `http://x-access-token:${token}@`)}/${name}.git`;
		const work = path.join(w.dir, "stolen");
		await git(w.dir, "clone", "-q", remote("api"), work);
		await git(work, "commit", "--allow-empty", "-q", "-m", "chore: stolen");
		const push = promisify(execFile)("git", [
			"-C",
			work,
			"push",
			"-q",
			remote("web"),
			"HEAD:refs/heads/stolen",
		]);
		await expect(push).rejects.toThrow(/403|denied|Authentication failed|unable to access/i);
		expect(
			await git(w.dir, "--git-dir", w.repos.web?.path as string, "branch", "--list", "stolen"),
		).toBe("");
	});
});
