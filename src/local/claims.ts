import { readFileSync } from "node:fs";
import { rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { serve } from "@hono/node-server";
import { holdLock, type Lock } from "./lock";
import { portHolder } from "./port-holder";

// What a local stack claims as it starts, each alone on the machine: its data dir (two stacks on one
// store would corrupt each other's runs) and its port. A claim another holds is refused in one line
// that names the holder and the fix.

/** A condition the start found, with its fix, in one line: said as it is, never as a trace. */
export class StartRefused extends Error {
	override name = "StartRefused";
}

/** What a running stack leaves in its data dir for the next one to say who holds it. */
interface Holder {
	pid: number;
	url: string;
}

const holderFile = (dataDir: string) => path.join(dataDir, "stack.json");

function readHolder(dataDir: string): Holder | undefined {
	try {
		return JSON.parse(readFileSync(holderFile(dataDir), "utf8")) as Holder;
	} catch {
		return undefined;
	}
}

/** Writes who holds the data dir; the function that removes it again. */
export async function sayHolder(dataDir: string, url: string): Promise<() => Promise<void>> {
	const holder: Holder = { pid: process.pid, url };
	await writeFile(holderFile(dataDir), JSON.stringify(holder), { mode: 0o600 });
	return () => rm(holderFile(dataDir), { force: true });
}

/** The data dir's lock (a kernel-held one: lock.ts), or who holds it. */
export async function holdDataDir(dataDir: string): Promise<Lock> {
	const lock = await holdLock(path.join(dataDir, "lock"));
	if (lock) return lock;
	const h = readHolder(dataDir);
	throw new StartRefused(
		`Lisa already runs${h ? ` at ${h.url} (pid ${h.pid})` : ""} on the data dir ${dataDir}: stop it first, or give this one another LISA_DATA_DIR (and PORT)`,
	);
}

/** Listens on the port (loopback only), or says who already does. */
export async function listen(
	port: number,
	fetch: (req: Request) => Response | Promise<Response>,
): Promise<ReturnType<typeof serve>> {
	const server = serve({ fetch, port, hostname: "127.0.0.1" });
	try {
		await new Promise<void>((resolve, reject) => {
			server.once("listening", resolve);
			server.once("error", reject);
		});
	} catch (err) {
		if ((err as NodeJS.ErrnoException).code !== "EADDRINUSE") throw err;
		const holder = portHolder(port);
		const lisa = holder && /\bsrc\/cli\/main\.ts start\b|\blisa start\b/.test(holder.command);
		throw new StartRefused(
			lisa
				? `Lisa already runs at http://127.0.0.1:${port} (pid ${holder.pid}): stop it first, or set PORT (and LISA_DATA_DIR) to start another`
				: `port ${port} is in use${holder ? ` by pid ${holder.pid} (${holder.command.slice(0, 80)})` : ""}: set PORT to a free port, or stop that program`,
		);
	}
	return server;
}
