import { describe, expect, it } from "vitest";
import { parseConfigText } from "../config/load";
import { branchName, pickRepo, slugify } from "./run";

describe("branch names (DESIGN §9)", () => {
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
