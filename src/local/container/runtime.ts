import { execFile, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { delimiter, join } from "node:path";

// The container runtime on this machine: podman (Debian's), else a working Docker engine. Every
// call is an argv (no shell) with the flags this machine's kernel needs
// (docs/agent-task.md › The container).

export interface ContainerRuntime {
	name: "podman" | "docker";
	/** Global flags before the subcommand (podman's OCI runtime). */
	global: string[];
	/** Flags for every `run` and `build`: resource limits the host can grant. */
	limits: string[];
}

export function onPath(cmd: string, pathVar = process.env.PATH ?? ""): boolean {
	return pathVar.split(delimiter).some((dir) => dir && existsSync(join(dir, cmd)));
}

/**
 * Limits the host can grant a container's first process. podman asks for nofile=1048576, which a
 * host with a lower hard limit (and root without CAP_SYS_RESOURCE) refuses for every container;
 * its nproc must stay within kernel.pid_max as well (a higher one was refused on such a host).
 */
export function hostUlimits(
	limits = readFileSync("/proc/self/limits", "utf8"),
	pidMax = Number(readFileSync("/proc/sys/kernel/pid_max", "utf8")),
): string[] {
	const hard = (label: string) => {
		const line = limits.split("\n").find((l) => l.startsWith(label));
		const value = line?.slice(label.length).trim().split(/\s+/)[1];
		return value && /^\d+$/.test(value) ? Number(value) : undefined;
	};
	const out: string[] = [];
	const nofile = Math.min(hard("Max open files") ?? 1048576, 1048576);
	const nproc = Math.min(hard("Max processes") ?? pidMax, pidMax || 32768);
	out.push("--ulimit", `nofile=${nofile}:${nofile}`, "--ulimit", `nproc=${nproc}:${nproc}`);
	return out;
}

/** Runs the runtime with `args`; rejects with its stderr's last lines when it fails. */
export function runtimeCall(
	rt: ContainerRuntime,
	args: string[],
	opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<string> {
	return new Promise((resolve, reject) => {
		execFile(
			rt.name,
			[...rt.global, ...args],
			{ maxBuffer: 64 * 1024 * 1024, timeout: opts.timeoutMs ?? 120_000, env: opts.env },
			(err, stdout, stderr) => {
				if (!err) return resolve(stdout);
				const said = stderr.trim().split("\n").slice(-3).join(" ").trim();
				reject(new Error(`${rt.name} ${args[0]} failed: ${said || err.message}`));
			},
		);
	});
}

/** Runs the runtime with its output on ours (a build): resolves with its exit code. */
export function runtimeAttached(rt: ContainerRuntime, args: string[]): Promise<number> {
	return new Promise((resolve, reject) => {
		const child = spawn(rt.name, [...rt.global, ...args], {
			stdio: ["ignore", "inherit", "inherit"],
		});
		child.on("error", reject);
		child.on("close", (code) => resolve(code ?? 1));
	});
}

/**
 * podman when it is installed and answers, else docker when its engine answers. On a host with
 * cgroups in hybrid mode crun refuses every container: podman runs runc there when it is present.
 */
export async function findRuntime(pathVar = process.env.PATH ?? ""): Promise<ContainerRuntime> {
	const tried: string[] = [];
	if (onPath("podman", pathVar)) {
		const rt: ContainerRuntime = {
			name: "podman",
			global: onPath("runc", pathVar) ? ["--runtime", "runc"] : [],
			limits: hostUlimits(),
		};
		try {
			await runtimeCall(rt, ["info", "--format", "{{.Host.OCIRuntime.Name}}"], {
				timeoutMs: 30_000,
			});
			return rt;
		} catch (err) {
			tried.push((err as Error).message);
		}
	}
	if (onPath("docker", pathVar)) {
		const rt: ContainerRuntime = { name: "docker", global: [], limits: [] };
		try {
			await runtimeCall(rt, ["info", "--format", "{{.ServerVersion}}"], { timeoutMs: 30_000 });
			return rt;
		} catch (err) {
			tried.push((err as Error).message);
		}
	}
	throw new Error(
		`no container runtime answers${tried.length ? ` (${tried.join("; ")})` : ""}: install podman (apt-get install podman buildah runc) or start a Docker engine`,
	);
}

export async function imageExists(rt: ContainerRuntime, ref: string): Promise<boolean> {
	return runtimeCall(rt, ["image", "inspect", "--format", "{{.Id}}", ref]).then(
		() => true,
		() => false,
	);
}
