import { describe, expect, it } from "vitest";
import { parseConfigText } from "../config/load";
import { launchRepos } from "../launcher/launcher";
import {
	branchName,
	newRun,
	newStep,
	pickRepo,
	planStep,
	previousSteps,
	readsAllRepos,
	type Step,
	slugify,
	workSteps,
} from "./run";

describe("branch names", () => {
	it("is <prefix><key lowercase>-<slug ≤40>", () => {
		expect(branchName("feat/", "ENG-123", "Fix login redirect")).toBe(
			"feat/eng-123-fix-login-redirect",
		);
	});

	it("cuts long titles at a word boundary within 40 characters", () => {
		const b = branchName(
			"feat/",
			"ENG-1",
			"Make the checkout flow remember the last used shipping address across sessions",
		);
		const slug = b.slice("feat/eng-1-".length);
		expect(slug.length).toBeLessThanOrEqual(40);
		expect(slug).toBe("make-the-checkout-flow-remember-the-last");
	});

	it("strips accents and punctuation, and survives an empty title", () => {
		expect(slugify("Café: ½ déjà-vu!!")).toBe("cafe-1-2-deja-vu");
		expect(branchName("lisa/", "ENG-9", "!!!")).toBe("lisa/eng-9");
	});
});

describe("repo choice", () => {
	const config = parseConfigText(
		`repos: [{name: api, url: "file:///a", match: [api, backend]}, {name: web, url: "file:///w", match: [web]}]`,
		"c.yaml",
	);
	it("takes the repo whose hint starts the title, else the first", () => {
		expect(pickRepo(config, "Web: fix the header").name).toBe("web");
		expect(pickRepo(config, "backend: add cache").name).toBe("api");
		expect(pickRepo(config, "Something else").name).toBe("api");
	});
});

describe("previous steps of a multi-repo run", () => {
	it("are the succeeded steps of lower orders, with their branches and PRs", () => {
		const done = (i: number, repo: string, order: number): Step => ({
			...newStep(i, repo),
			order,
			status: "succeeded",
			branch: "feat/eng-1-x",
			prUrl: `https://github.com/acme/${repo}/pull/${i}`,
		});
		const steps: Step[] = [
			{ ...planStep(0), status: "succeeded" },
			done(1, "api", 1),
			done(2, "schema", 1),
			{ ...newStep(3, "web"), order: 2, status: "running" },
			{ ...newStep(4, "docs"), order: 2, status: "pending" },
		];
		expect(previousSteps({ steps }, 3)).toEqual([
			{ repo: "api", branch: "feat/eng-1-x", prUrl: "https://github.com/acme/api/pull/1" },
			{ repo: "schema", branch: "feat/eng-1-x", prUrl: "https://github.com/acme/schema/pull/2" },
		]);
		expect(previousSteps({ steps }, 1)).toEqual([]); // order 1 has nothing before it
		expect(previousSteps({ steps }, 0)).toEqual([]); // nor has the plan
	});
});

describe("steps that read every repo", () => {
	it("are the plan and the epic's phases: no repository's work, every repository launched", () => {
		const config = parseConfigText(
			`repos: [{name: api, url: "file:///a"}, {name: web, url: "file:///w"}]`,
			"c.yaml",
		);
		const phase = (i: number, kind: Step["kind"]): Step => ({ ...newStep(i, "*"), kind });
		const steps: Step[] = [phase(0, "research"), phase(1, "epic_plan"), newStep(2, "web")];
		const run = {
			...newRun({ runId: "r", source: "linear", issueId: "i", trigger: "epic", now: "t" }),
			config,
			steps,
		};
		expect(steps.map(readsAllRepos)).toEqual([true, true, false]);
		expect(readsAllRepos(planStep(0))).toBe(true);
		expect(workSteps(run).map((s) => s.index)).toEqual([2]);
		expect(previousSteps(run, 1)).toEqual([]);
		expect(launchRepos(run, 0).map((r) => r.name)).toEqual(["api", "web"]);
		expect(launchRepos(run, 1).map((r) => r.name)).toEqual(["api", "web"]);
		expect(launchRepos(run, 2)).toEqual([{ name: "web", url: "file:///w" }]);
	});
});
