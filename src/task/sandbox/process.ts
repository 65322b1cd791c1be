import { spawn } from "node:child_process";
import type { Readable, Writable } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import { tail } from "../../domain/redact";

/** The unprivileged user an agent and everything it can influence runs as (identity.ts). */
export interface AgentUser {
	uid: number;
	gid: number;
	home: string;
	/** A network of its own (egress/confine.ts): how to enter it, and the proxy it goes out by. */
	network?: { enter(): string[]; env: Record<string, string> };
}

export interface ProcessResult {
	code: number | null;
	signal: NodeJS.Signals | null;
	/** The last `maxOutput` characters of stdout and stderr, interleaved as they arrived. */
	output: string;
	/** stdout alone (bounded the same way), for commands whose answer is parsed. */
	stdout: string;
	/** stdout was longer than `maxOutput`: `stdout` is only its end. */
	truncated: boolean;
	timedOut: boolean;
	error?: string;
	/** The program's pid, which is also its process group's id. */
	pid?: number;
}

export interface ProcessOptions {
	cwd: string;
	env: NodeJS.ProcessEnv;
	timeoutMs?: number;
	maxOutput?: number;
	onOutput?: (chunk: string) => void;
	signal?: AbortSignal;
	/**
	 * Leave what the program started in the background running after it exits (a setup command
	 * starting a service for the tests). By default the rest of its process group is killed.
	 */
	keepBackground?: boolean;
	/** Run as the agent's user (its uid, gid and HOME) instead of the task's. */
	user?: AgentUser;
	/** Fed to the program's stdin (closed by default). */
	stdin?: string | Readable;
	/** Where stdout goes instead of being collected (another program's input). */
	stdout?: Writable;
	/**
	 * Reads stdout a line at a time (a CLI's JSON events): what it returns for a line is what
	 * `output` keeps and `onOutput` gets instead of the line, nothing when it returns undefined.
	 */
	stdoutLines?: (line: string) => string | undefined;
}

const DEFAULT_MAX_OUTPUT = 64 * 1024;
/** After the program exits, how long its output may still arrive from pipes it shared. */
const DRAIN_MS = 2_000;

/**
 * Runs a program from an argv array (never a shell string), stdin closed unless given. It gets its own process
 * group so a timeout or abort kills everything it started.
 */
export function runProcess(
	command: string,
	args: string[],
	opts: ProcessOptions,
): Promise<ProcessResult> {
	const max = opts.maxOutput ?? DEFAULT_MAX_OUTPUT;
	return new Promise((resolve) => {
		let output = "";
		let stdout = "";
		let stdoutLength = 0;
		let timedOut = false;
		let settled = false;
		const net = opts.user?.network;
		// In the agent's namespace: nsenter, as root, enters it and becomes the agent's uid and gid.
		const [program, argv] = net
			? (() => {
					const [nsenter = "nsenter", ...pre] = net.enter();
					return [nsenter, [...pre, command, ...args]] as const;
				})()
			: [command, args];
		const child = spawn(program, argv, {
			cwd: opts.cwd,
			env: opts.user ? { ...opts.env, ...net?.env, HOME: opts.user.home } : opts.env,
			// Without input stdin is /dev/null, never an empty pipe: bash takes a socket on stdin for a
			// remote shell and reads ~/.bashrc.
			stdio: [opts.stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"],
			detached: true,
			...(opts.user && !net ? { uid: opts.user.uid, gid: opts.user.gid } : {}),
		});
		const kill = () => {
			if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
			try {
				process.kill(-child.pid, "SIGTERM");
			} catch {}
			setTimeout(() => {
				try {
					if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
				} catch {}
			}, 5000).unref();
		};
		const timer = opts.timeoutMs
			? setTimeout(() => {
					timedOut = true;
					kill();
				}, opts.timeoutMs)
			: undefined;
		opts.signal?.addEventListener("abort", kill, { once: true });
		const show = (s: string) => {
			output = tail(output + s, max);
			opts.onOutput?.(s);
		};
		const collect = (buf: Buffer) => show(buf.toString("utf8"));
		// Lines are cut after decoding, so a character split across two reads stays whole.
		const decoder = new StringDecoder("utf8");
		let partial = "";
		const readLines = (text: string, end = false) => {
			const lines = (partial + text).split("\n");
			partial = end ? "" : (lines.pop() ?? "");
			for (const line of lines) {
				const shown = line && opts.stdoutLines?.(line);
				if (shown) show(`${shown}\n`);
			}
		};
		const out = child.stdout as Readable;
		const err = child.stderr as Readable;
		if (child.stdin) {
			child.stdin.on("error", () => {}); // the program may exit without reading all of it
			if (typeof opts.stdin === "string") child.stdin.end(opts.stdin);
			else opts.stdin?.pipe(child.stdin);
		}
		if (opts.stdout) out.pipe(opts.stdout);
		else
			out.on("data", (buf: Buffer) => {
				const s = opts.stdoutLines ? decoder.write(buf) : buf.toString("utf8");
				stdoutLength += s.length;
				stdout = tail(stdout + s, max);
				if (opts.stdoutLines) readLines(s);
				else show(s);
			});
		err.on("data", collect);
		const finish = (r: Omit<ProcessResult, "output" | "stdout" | "timedOut" | "truncated">) => {
			if (settled) return;
			settled = true;
			if (opts.stdoutLines) readLines(decoder.end(), true);
			if (timer) clearTimeout(timer);
			opts.signal?.removeEventListener("abort", kill);
			// nsenter's own exec failure reads as spawn's would: a missing program is ENOENT.
			if (
				net &&
				(r.code === 126 || r.code === 127) &&
				output.startsWith("nsenter: failed to execute")
			)
				r = { ...r, error: `spawn ${command} ${r.code === 127 ? "ENOENT" : "EACCES"}` };
			resolve({ ...r, output, stdout, timedOut, truncated: stdoutLength > max, pid: child.pid });
		};
		// What the program left running in its group (a server a test started, a daemon) goes when
		// the program ends, unless asked to stay. Either way a background process that still holds the
		// pipes does not keep the result waiting.
		child.on("exit", (code, signal) => {
			if (!opts.keepBackground)
				try {
					if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
				} catch {}
			setTimeout(() => {
				out.destroy();
				err.destroy();
				finish({ code, signal });
			}, DRAIN_MS).unref();
		});
		child.on("error", (err) => finish({ code: null, signal: null, error: err.message }));
		child.on("close", (code, signal) => finish({ code, signal }));
	});
}
