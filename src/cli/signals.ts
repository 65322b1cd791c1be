// How a long-running command (`lisa start`, the demo) is stopped: SIGINT (Ctrl-C), SIGTERM (a
// process manager), SIGHUP (a closed terminal), to it or to its process group, or npm, which started
// it, going away without passing a signal on (SIGKILL).

/**
 * Calls `stop` once, with why. One kill can arrive twice (a terminal's Ctrl-C or a kill of the
 * process group reaches both npm and this process, and npm forwards it): only a signal more than a
 * second later forces the exit, with `forcedCode`.
 */
export function onStop(stop: (why: string) => void, forcedCode = 1): void {
	let stopping: number | undefined;
	const handle = (why: string) => {
		if (stopping !== undefined) {
			if (Date.now() - stopping > 1_000) process.exit(forcedCode);
			return;
		}
		stopping = Date.now();
		stop(why);
	};
	for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const)
		process.on(signal, () => handle(signal));
	// Started by npm (its script `exec`s this process), killed without passing the signal on: this
	// process is re-parented, and stops instead of serving on as an orphan. Only under npm: started
	// some other way (`nohup node … start &`), its parent may go freely.
	// npm going is no second signal: it never forces the exit of a stop under way (npm dies of the
	// same SIGHUP that is stopping this process, and the stop may take more than a second).
	if (process.env.npm_lifecycle_event) {
		const parent = process.ppid;
		const watch = setInterval(() => {
			if (process.ppid === parent) return;
			clearInterval(watch);
			if (stopping === undefined) handle(`npm (process ${parent}) is gone`);
		}, 1_000).unref();
	}
}
