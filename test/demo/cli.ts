import { parseArgs } from "node:util";
import { SIGN_IN_CODE_TTL_MS } from "../../src/api/sign-in";
import { onStop } from "../../src/cli/signals";
import { changesLine } from "../../src/domain/changes";
import { type Demo, startDemo } from "./scenario";

// `npm run demo [-- --once | --keep] [--port N]` (README › Quick start): the demo's runs, then it
// stays up — the dashboard and `lisa status` show them — until Ctrl-C, SIGTERM or SIGHUP (to it, to
// npm or to their process group) stops everything it started. `--once` stops as soon as the runs ended.

const USAGE =
	"usage: npm run demo [-- --keep | --once] [--port N]\n  --keep  stay up until Ctrl-C (the default)\n  --once  stop once the runs ended\n  --port  the port of Lisa's API and dashboard (default: any free one)";

interface DemoArgs {
	once: boolean;
	port?: number;
}

/** The arguments, or the reason they are wrong. */
function demoArgs(argv: string[]): DemoArgs | { error: string } {
	let values: { keep?: boolean; once?: boolean; port?: string; help?: boolean };
	try {
		({ values } = parseArgs({
			args: argv,
			strict: true,
			options: {
				keep: { type: "boolean" },
				once: { type: "boolean" },
				port: { type: "string" },
				help: { type: "boolean", short: "h" },
			},
		}));
	} catch (err) {
		return { error: `${(err as Error).message}\n${USAGE}` };
	}
	if (values.help) return { error: USAGE };
	if (values.keep && values.once)
		return { error: `--keep and --once contradict each other\n${USAGE}` };
	const port = values.port === undefined ? undefined : Number(values.port);
	if (port !== undefined && !(Number.isInteger(port) && port > 0 && port < 65536))
		return { error: `--port must be a port number (1-65535), not "${values.port}"\n${USAGE}` };
	return { once: values.once === true, port };
}

function summary(demo: Demo): string[] {
	const lines: string[] = [];
	for (const { issue, run } of demo.runs) {
		const linear = demo.world.linear.stateName(issue);
		lines.push(
			`${issue.identifier} "${issue.title}": run ${run.id} ${run.status}; Linear: ${linear}`,
		);
		if (run.error) lines.push(`  reason: ${run.error.split("\n").join("\n          ")}`);
		for (const step of run.steps) {
			if (!step.prUrl) continue;
			const change = step.changes ? `  ${changesLine(step.changes)}` : "";
			lines.push(`  ${step.repo}: ${step.prUrl}  "${step.prTitle ?? ""}"${change}`);
		}
	}
	return lines;
}

function ready(demo: Demo): string[] {
	const env = `LISA_URL=${demo.url} LISA_READ_TOKEN=${demo.readToken}`;
	const multi = demo.runs.find(({ run }) => run.prUrls.length > 1)?.run.id ?? "<run id>";
	return [
		"",
		`The demo is ready: Lisa at ${demo.url}`,
		`  dashboard:   ${demo.signInLink()}  (signs in once, within ${SIGN_IN_CODE_TTL_MS / 60_000} min)`,
		`  read token:  ${demo.readToken}`,
		`  admin token: ${demo.apiToken}  (cancel, retry, approve)`,
		"  try:",
		`    ${env} npx lisa runs`,
		`    ${env} npx lisa status ${multi}`,
		`    ${env} npx lisa status`,
		`Ctrl-C stops it: the stack, the doubles, and ${demo.world.dir} are gone.`,
	];
}

/** Runs the demo; resolves with the exit code once everything it started has stopped. */
export async function runDemo(argv: string[]): Promise<number> {
	const args = demoArgs(argv);
	if ("error" in args) {
		console.error(args.error);
		return 2;
	}
	const stop = new AbortController();
	onStop((why) => {
		console.log(`\n${why}: stopping the demo…`);
		stop.abort(new Error(`stopped by ${why}`));
	}, 130);
	let demo: Demo;
	try {
		demo = await startDemo((line) => console.log(line), { port: args.port, signal: stop.signal });
	} catch (err) {
		if (stop.signal.aborted) {
			console.log("stopped.");
			return 0;
		}
		console.error(`the demo failed: ${(err as Error).message}`);
		return 1;
	}
	console.log(["", ...summary(demo)].join("\n"));
	if (!args.once && !stop.signal.aborted) {
		console.log(ready(demo).join("\n"));
		await new Promise((resolve) => stop.signal.addEventListener("abort", resolve, { once: true }));
	}
	await demo.world.stop();
	console.log("stopped.");
	return 0;
}
