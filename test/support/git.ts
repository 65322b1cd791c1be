import { execFile } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";

const exec = promisify(execFile);

export async function git(cwd: string, ...args: string[]): Promise<string> {
	const { stdout } = await exec("git", args, {
		cwd,
		env: {
			...process.env,
			GIT_AUTHOR_NAME: "Test",
			GIT_AUTHOR_EMAIL: "test@example.com",
			GIT_COMMITTER_NAME: "Test",
			GIT_COMMITTER_EMAIL: "test@example.com",
		},
	});
	return stdout.trim();
}

export interface BareRepo {
	path: string;
	url: string;
}

/** A bare repository (the "remote") with one commit on `base`, made through a scratch clone. */
export async function bareRepo(
	root: string,
	name: string,
	base = "main",
	files: Record<string, string> = {},
): Promise<BareRepo> {
	const bare = path.join(root, `${name}.git`);
	const seed = path.join(root, `${name}-seed`);
	await mkdir(seed, { recursive: true });
	await git(root, "init", "--bare", "--initial-branch", base, bare);
	await git(seed, "init", "--initial-branch", base);
	await writeFile(path.join(seed, "README.md"), `# ${name}\n`);
	for (const [file, content] of Object.entries(files)) {
		await mkdir(path.dirname(path.join(seed, file)), { recursive: true });
		await writeFile(path.join(seed, file), content);
	}
	await git(seed, "add", "-A");
	await git(seed, "commit", "-m", "chore: initial commit");
	await git(seed, "remote", "add", "origin", bare);
	await git(seed, "push", "origin", base);
	return { path: bare, url: pathToFileURL(bare).href };
}

export async function branches(bare: string): Promise<string[]> {
	const out = await git(bare, "for-each-ref", "--format=%(refname:short)", "refs/heads/");
	return out.split("\n").filter(Boolean);
}
