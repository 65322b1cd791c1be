import { createHash, randomUUID } from "node:crypto";
import { existsSync, readFileSync, realpathSync, statSync } from "node:fs";
import {
	chmod,
	copyFile,
	link,
	lstat,
	mkdir,
	readdir,
	readlink,
	rename,
	rm,
	symlink,
} from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

// What agents running as other uids must reach (docs/security.md › Security): their workspaces, the
// agent CLIs the stack runs and the Node.js those run on. Root's home and `mktemp -d` folders are
// closed to other users (mode 700), so a checkout or data dir there is out of their reach; what
// lives in one is then placed under SHARED_DIR, a folder any user can search, instead. The pinned
// CLIs (1.2 GB) are mirrored as hard links, once per install: no copy at each start.

/** Where the local stack places what agents must reach when its own folders are closed to them. */
export const SHARED_DIR = "/var/lib/lisa";

/** The pinned agent CLIs `npm install` puts in agents/: after the user's own on PATH. */
export const PINNED_CLIS = fileURLToPath(
	new URL("../../agents/node_modules/.bin", import.meta.url),
);

/** The real path of `p`, or of what exists of it (a data dir not made yet). */
function real(p: string): string {
	const abs = path.resolve(p);
	if (existsSync(abs)) return realpathSync(abs);
	const parent = path.dirname(abs);
	return parent === abs ? abs : path.join(real(parent), path.basename(abs));
}

/** The first folder on the way to `p` (itself, when it exists) that other users cannot search. */
export function closedFolder(p: string): string | undefined {
	const chain: string[] = [];
	for (let dir = real(p); ; dir = path.dirname(dir)) {
		chain.unshift(dir);
		if (dir === path.dirname(dir)) break;
	}
	return chain.find((dir) => {
		const st = statSync(dir, { throwIfNoEntry: false });
		return st !== undefined && (st.mode & 0o001) === 0;
	});
}

const hash = (text: string) => createHash("sha256").update(text).digest("hex").slice(0, 12);

/**
 * Copies the tree at `from` to `to`: folders open to everyone (0755), files as hard links (a copy
 * across file systems), symbolic links as they are. A file other users cannot read is copied with
 * read access added, so the original's mode never changes.
 */
export async function mirrorTree(from: string, to: string): Promise<void> {
	const st = await lstat(from);
	if (st.isSymbolicLink()) return symlink(await readlink(from), to);
	if (st.isDirectory()) {
		await mkdir(to, { mode: 0o755 });
		await chmod(to, 0o755);
		for (const name of await readdir(from))
			await mirrorTree(path.join(from, name), path.join(to, name));
		return;
	}
	if (!st.isFile()) return;
	const open = (st.mode & 0o004) !== 0 && ((st.mode & 0o100) === 0 || (st.mode & 0o001) !== 0);
	if (open)
		try {
			return await link(from, to);
		} catch (err) {
			const code = (err as NodeJS.ErrnoException).code;
			if (code !== "EXDEV" && code !== "EPERM" && code !== "EMLINK") throw err;
		}
	await copyFile(from, to);
	const mode = st.mode & 0o777;
	await chmod(to, mode | 0o044 | (mode & 0o100 ? 0o011 : 0));
}

/**
 * `from` mirrored under SHARED_DIR/<kind>, at a name derived from its path and `version`: made once
 * (in a temporary folder, then renamed, so an interrupted mirror is never used), and older mirrors
 * of the same path removed. `only`: just these of its entries.
 */
async function mirrored(
	kind: string,
	from: string,
	version: string,
	only?: string[],
): Promise<string> {
	const parent = path.join(SHARED_DIR, kind);
	const source = hash(realpathSync(from));
	const target = path.join(parent, `${source}-${hash(version)}`);
	// Under its own name: Node.js finds packages in folders named node_modules.
	const tree = path.join(target, path.basename(from));
	if (statSync(tree, { throwIfNoEntry: false })?.isDirectory()) return tree;
	await openFolder(parent);
	// A folder without the tree is no mirror of this Lisa's (a mirror appears whole, by a rename).
	if (statSync(target, { throwIfNoEntry: false }) && !statSync(tree, { throwIfNoEntry: false }))
		await rm(target, { recursive: true, force: true });
	const temp = `${target}.${randomUUID()}.partial`;
	try {
		await mkdir(temp, { mode: 0o755 });
		const into = path.join(temp, path.basename(from));
		if (only) {
			await mkdir(into, { mode: 0o755 });
			for (const name of only)
				if (existsSync(path.join(from, name)))
					await mirrorTree(path.join(from, name), path.join(into, name));
		} else await mirrorTree(from, into);
		await rename(temp, target).catch((err: NodeJS.ErrnoException) => {
			// Another stack made the same mirror meanwhile: theirs is as good.
			if (err.code !== "ENOTEMPTY" && err.code !== "EEXIST") throw err;
		});
	} finally {
		await rm(temp, { recursive: true, force: true });
	}
	// Older installs' mirrors, and what a start that died while mirroring left an hour ago.
	const hourAgo = Date.now() - 3600_000;
	for (const old of await readdir(parent)) {
		const at = path.join(parent, old);
		const partial = old.endsWith(".partial");
		if (
			(partial && (statSync(at, { throwIfNoEntry: false })?.mtimeMs ?? 0) < hourAgo) ||
			(!partial && old.startsWith(`${source}-`) && at !== target)
		)
			await rm(at, { recursive: true, force: true });
	}
	return tree;
}

/** Makes `dir` (and SHARED_DIR) searchable by other users, or says why it cannot be. */
async function openFolder(dir: string): Promise<void> {
	for (const d of [SHARED_DIR, dir]) {
		await mkdir(d, { recursive: true, mode: 0o755 });
		await chmod(d, 0o755);
	}
	const closed = closedFolder(dir);
	if (closed)
		throw new Error(
			`agents run as their own uids and must reach ${dir}, but ${closed} is not searchable by other users: run \`chmod o+x ${closed}\``,
		);
}

/**
 * The pinned CLIs' folder where other users can run them: `pinned` itself, else its mirror (with the
 * folder that closes `pinned` to them).
 */
export async function reachableClis(
	pinned = PINNED_CLIS,
): Promise<{ dir: string; closed?: string }> {
	const modules = path.dirname(pinned);
	const closed = statSync(modules, { throwIfNoEntry: false }) && closedFolder(modules);
	if (!closed) return { dir: pinned };
	// npm writes this file at each install: a new install makes a new mirror.
	const installed = readFileSync(path.join(modules, ".package-lock.json"), "utf8");
	return {
		dir: path.join(await mirrored("agents", modules, installed), path.basename(pinned)),
		closed,
	};
}

/** What the agents of a stack reach, and where. */
export interface AgentReach {
	/** Where the steps' workspaces are made. */
	workspaces: string;
	/** The PATH of the tasks and their agents: the user's, then the pinned CLIs. */
	path: string;
	/** What was placed under SHARED_DIR and why, in one line; undefined when nothing was. */
	moved?: string;
}

export interface ReachOptions {
	dataDir: string;
	/** Whether agents run as other uids than the stack's: only then is anything moved. */
	otherUids: boolean;
	/** The stack's PATH. */
	pathVar?: string;
	/** The pinned CLIs' folder (a test's own). */
	pinned?: string;
	/** The Node.js that runs the CLIs (a test's own). */
	node?: string;
}

/**
 * Where the workspaces, the pinned CLIs and Node.js are for the agents: where they are when other
 * users can reach them, else mirrored (or, for the workspaces, made) under SHARED_DIR.
 */
export async function agentReach(opts: ReachOptions): Promise<AgentReach> {
	const pinned = opts.pinned ?? PINNED_CLIS;
	const node = opts.node ?? process.execPath;
	const entries = (opts.pathVar ?? "").split(path.delimiter).filter(Boolean);
	const local = path.join(opts.dataDir, "workspaces");
	if (!opts.otherUids)
		return { workspaces: local, path: [...entries, pinned].join(path.delimiter) };

	const moved: string[] = [];
	const closed = new Set<string>();
	const note = (what: string, closedAt: string) => {
		moved.push(what);
		closed.add(closedAt);
	};
	let workspaces = local;
	const dataClosed = closedFolder(opts.dataDir);
	if (dataClosed) {
		workspaces = path.join(SHARED_DIR, "workspaces", hash(real(opts.dataDir)));
		await openFolder(path.dirname(workspaces));
		note("the workspaces", dataClosed);
	}
	const clis = await reachableClis(pinned);
	if (clis.closed) note("the pinned agent CLIs", clis.closed);
	// Node.js installed in a closed folder (nvm in root's home): its programs and packages, npm
	// included; never its etc/ (a global npmrc may hold a registry token).
	const nodeBin = path.dirname(node);
	const nodeClosed = closedFolder(node);
	let agentPath = entries;
	if (nodeClosed && path.basename(nodeBin) === "bin") {
		const prefix = path.dirname(nodeBin);
		const mirror = path.join(
			await mirrored("node", prefix, `${process.version}:${statSync(node).mtimeMs}`, [
				"bin",
				"lib",
			]),
			"bin",
		);
		agentPath = entries.includes(nodeBin)
			? entries.map((e) => (e === nodeBin ? mirror : e))
			: [mirror, ...entries];
		note("Node.js", nodeClosed);
	}
	return {
		workspaces,
		path: [...agentPath, clis.dir].join(path.delimiter),
		moved: moved.length
			? `under ${SHARED_DIR}: ${list(moved)}, as ${list([...closed])} ${closed.size > 1 ? "are" : "is"} closed to other users`
			: undefined,
	};
}

const list = (items: string[]) =>
	items.length < 2 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;
