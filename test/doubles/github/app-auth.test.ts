import { generateKeyPairSync } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createAppAuth } from "@octokit/auth-app";
import { Octokit } from "octokit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bareRepo, git } from "../../support/git";
import { statusOf } from "../../support/octokit";
import { type GitHttpServer, startGitHttp } from "../git-http/server";
import { type GitHubDouble, startGitHubDouble } from "./server";

// The GitHub double as a GitHub App's installation sees it, through octokit's own App auth: the
// JWT finds the installation and mints tokens, each held to its repositories and permissions on
// the REST API and on the git host.

const keys = generateKeyPairSync("rsa", {
	modulusLength: 2048,
	publicKeyEncoding: { type: "spki", format: "pem" },
	privateKeyEncoding: { type: "pkcs8", format: "pem" },
});
const APP = {
	id: 4242,
	slug: "lisa-app",
	publicKey: keys.publicKey,
	installation: {
		id: 77,
		repos: ["acme/api", "acme/web"],
		permissions: { contents: "write", pull_requests: "write", checks: "read" } as const,
	},
};

let dir: string;
let github: GitHubDouble;
let gitHttp: GitHttpServer;
beforeAll(async () => {
	dir = await mkdtemp(path.join(tmpdir(), "lisa-app-"));
	const api = await bareRepo(dir, "api");
	const web = await bareRepo(dir, "web");
	github = await startGitHubDouble({
		repos: { "acme/api": api.path, "acme/web": web.path },
		app: {
			...APP,
			installation: { ...APP.installation, permissions: { ...APP.installation.permissions } },
		},
	});
	gitHttp = await startGitHttp({
		root: dir,
		token: github.token,
		authorize: (password, repo, write) =>
			github.installationTokens.allowsGit(password, `acme/${repo.replace(/\.git$/, "")}`, write),
	});
});
afterAll(async () => {
	await gitHttp?.stop();
	await github?.stop();
	await rm(dir, { recursive: true, force: true });
});

const auth = (privateKey = keys.privateKey) =>
	createAppAuth({
		appId: APP.id,
		privateKey,
		request: new Octokit({ baseUrl: github.url }).request,
	});

/** A token for `repositoryNames` with `permissions`, minted as Lisa would mint one for a step. */
async function stepToken(repositoryNames: string[], permissions: Record<string, "read" | "write">) {
	const { token } = await auth()({
		type: "installation",
		installationId: APP.installation.id,
		repositoryNames,
		permissions,
	});
	return token;
}

describe("the GitHub double as an App's installation", () => {
	it("finds the installation and mints a token with the JWT, which itself opens nothing else", async () => {
		const app = new Octokit({
			authStrategy: createAppAuth,
			auth: { appId: APP.id, privateKey: keys.privateKey },
			baseUrl: github.url,
		});
		const { data } = await app.rest.apps.getRepoInstallation({ owner: "acme", repo: "api" });
		expect(data.id).toBe(APP.installation.id);
		// The JWT is no token for a repository's routes.
		const jwt = (await auth()({ type: "app" })).token;
		const raw = new Octokit({ auth: jwt, baseUrl: github.url });
		expect(await statusOf(raw.rest.repos.get({ owner: "acme", repo: "api" }))).toBe(401);
		// Nor is one signed by another key.
		const other = generateKeyPairSync("rsa", {
			modulusLength: 2048,
			privateKeyEncoding: { type: "pkcs8", format: "pem" },
			publicKeyEncoding: { type: "spki", format: "pem" },
		});
		await expect(
			auth(other.privateKey)({ type: "installation", installationId: APP.installation.id }),
		).rejects.toThrow();
	});

	it("holds a step's token to its repository and its permissions, on the API and on the git host", async () => {
		const token = await stepToken(["api"], { contents: "write", pull_requests: "write" });
		expect(token).toMatch(/^ghs_/);
		const octokit = new Octokit({ auth: token, baseUrl: github.url });
		expect(await statusOf(octokit.rest.repos.get({ owner: "acme", repo: "api" }))).toBe(200);
		expect(await statusOf(octokit.rest.pulls.list({ owner: "acme", repo: "api" }))).toBe(200);
		// Another repository of the installation does not exist for it.
		expect(await statusOf(octokit.rest.repos.get({ owner: "acme", repo: "web" }))).toBe(404);
		expect(await statusOf(octokit.rest.pulls.list({ owner: "acme", repo: "web" }))).toBe(404);
		// A permission it was not given is refused.
		expect(
			await statusOf(octokit.rest.checks.listForRef({ owner: "acme", repo: "api", ref: "main" })),
		).toBe(403);

		// git: it pushes to its repository, not to the other one.
		const work = path.join(dir, "work");
		const url = (repo: string) =>
			`${gitHttp.url.replace("http://", `http://x-access-token:${token}@`)}/${repo}.git`;
		await git(dir, "clone", "-q", url("api"), work);
		await git(work, "commit", "--allow-empty", "-q", "-m", "chore: step");
		await git(work, "push", "-q", "origin", "HEAD:refs/heads/lisa/step");
		await expect(
			git(work, "push", "-q", url("web"), "HEAD:refs/heads/lisa/step"),
		).rejects.toThrow();
	});

	it("refuses a token asked for more than the installation holds, or for a repository it does not cover", async () => {
		await expect(stepToken(["api"], { administration: "write" })).rejects.toThrow(/not granted/);
		await expect(stepToken(["api"], { checks: "write" })).rejects.toThrow(/not granted/);
		await expect(stepToken(["billing"], { contents: "read" })).rejects.toThrow(/not accessible/);
	});

	it("refuses a token once it expired", async () => {
		const token = await stepToken(["api"], { contents: "read" });
		github.installationTokens.expire(token);
		const octokit = new Octokit({ auth: token, baseUrl: github.url });
		expect(await statusOf(octokit.rest.repos.get({ owner: "acme", repo: "api" }))).toBe(401);
	});
});
