import type { Octokit } from "octokit";
import { statusOf } from "../refs";

// Opening the pull request: create, or update the open PR of the same branch (a retried step never
// opens a second one). octokit's retry and throttling plugins handle 5xx and rate limits.

export interface PullRequestInput {
	slug: string;
	head: string;
	base: string;
	title: string;
	body: string;
}

export interface PullRequestResult {
	url: string;
	number: number;
	created: boolean;
}

export async function openPullRequest(
	octokit: Octokit,
	pr: PullRequestInput,
): Promise<PullRequestResult> {
	const [owner, repo] = pr.slug.split("/") as [string, string];
	const update = async () => {
		const existing = await octokit.rest.pulls.list({
			owner,
			repo,
			head: `${owner}:${pr.head}`,
			state: "open",
			per_page: 1,
		});
		const open = existing.data[0];
		if (!open) return undefined;
		const updated = await octokit.rest.pulls.update({
			owner,
			repo,
			pull_number: open.number,
			title: pr.title,
			body: pr.body,
		});
		return { url: updated.data.html_url, number: updated.data.number, created: false };
	};
	const found = await update();
	if (found) return found;
	try {
		const created = await octokit.rest.pulls.create({
			owner,
			repo,
			head: pr.head,
			base: pr.base,
			title: pr.title,
			body: pr.body,
		});
		return { url: created.data.html_url, number: created.data.number, created: true };
	} catch (err) {
		// Another attempt created it between our list and create.
		if (statusOf(err) === 422 && /already exists/i.test(String((err as Error).message))) {
			const again = await update();
			if (again) return again;
		}
		throw err;
	}
}
