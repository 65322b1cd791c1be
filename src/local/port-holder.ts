import { readdirSync, readFileSync, readlinkSync } from "node:fs";

// Who listens on a TCP port, from /proc: the socket's inode in /proc/net/tcp{,6}, then the process
// holding that socket. Only what this user may see (root sees every process).

export interface PortHolder {
	pid: number;
	/** Its command line, for people. */
	command: string;
}

function listeningInodes(port: number): Set<string> {
	const inodes = new Set<string>();
	for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
		let text = "";
		try {
			text = readFileSync(table, "utf8");
		} catch {
			continue;
		}
		for (const line of text.split("\n").slice(1)) {
			const f = line.trim().split(/\s+/);
			const local = f[1]?.split(":")[1];
			// st 0A is LISTEN; the inode is the tenth field.
			if (local && Number.parseInt(local, 16) === port && f[3] === "0A" && f[9]) inodes.add(f[9]);
		}
	}
	return inodes;
}

export function portHolder(port: number): PortHolder | undefined {
	const inodes = listeningInodes(port);
	if (!inodes.size) return undefined;
	for (const name of readdirSync("/proc")) {
		if (!/^\d+$/.test(name)) continue;
		let fds: string[];
		try {
			fds = readdirSync(`/proc/${name}/fd`);
		} catch {
			continue;
		}
		for (const fd of fds) {
			let target: string;
			try {
				target = readlinkSync(`/proc/${name}/fd/${fd}`);
			} catch {
				continue;
			}
			const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
			if (inode && inodes.has(inode)) {
				let command = "";
				try {
					command = readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0").join(" ").trim();
				} catch {}
				return { pid: Number(name), command };
			}
		}
	}
	return undefined;
}
