import os from "node:os";
import { isTerminalRun, type RunStatus } from "../src/domain/states";
import { allClis, buildImage, DEFAULT_IMAGE, OFFICIAL_BASE } from "../src/local/container/image";
import { ContainerLauncher } from "../src/local/container/launcher";
import { type ContainerRuntime, findRuntime, runtimeCall } from "../src/local/container/runtime";
import { STAND_IN } from "../src/local/container/stand-in";
import { bashReply, startOpenAiChatDouble } from "../test/doubles/models/openai-chat";
import { createStackWorld } from "../test/support/stack";
import { writeResult } from "./results";

// Agent image benchmark (docs/agent-task.md › The container), `npm run bench:image`, as root with
// podman:
//
// 1. The four-CLI task image's size, total and per layer (podman history: uncompressed sizes, with
//    the Dockerfile instruction that made each layer; "base" marks the base image's layers).
// 2. An image per agent CLI (AGENT_CLIS=<cli>) against it. All five are built from this tree in this
//    run with buildImage, on the base the default image was built on (cached layers make repeat
//    runs quick), so they compare alike. Target: a one-CLI image at most half the four-CLI one.
// 3. Launch → first output: two local stacks in this process (temporary data dirs, a bare repo as
//    the remote, the doubles of test/support/stack.ts), one with LISA_LAUNCHER=container (the
//    four-CLI image of 2.) and one with the child-process launcher, each running the built-in agent
//    against its own local OpenAI-compatible chat double. The stack's launcher.launch() is wrapped
//    to note when the pipeline calls it; the agent's first output is the moment the double receives
//    the agent's first model request (the built-in agent asks the model before it does anything),
//    so everything the task does first — start, clone, worktree — counts. Runs alternate between the
//    stacks, one warm-up each not counted, each run done (a pull request) before the next starts.
//    Target: the container launcher at most 2 s slower (median) than the child launcher. The table
//    splits the time at launch() returning: the container launcher's launch() makes the step's
//    runtime secret (`podman secret create`) before it starts `podman run`.
//
// Prints tables and writes JSON (bench/results/image-<time>.json). Targets are reported, never
// enforced (no exit code). BENCH_LAUNCHES sets the timed runs per launcher (5);
// BENCH_IMAGE_CLEANUP=1 removes the lisa-agent-bench images at the end (kept by default).

const LAUNCHES = Number(process.env.BENCH_LAUNCHES ?? 5);
const BENCH_IMAGE = "localhost/lisa-agent-bench";
const ONE_CLI_TARGET = 0.5;
const LAUNCH_TARGET_MS = 2000;

interface Layer {
	bytes: number;
	instruction: string;
	base: boolean;
}

interface Timing {
	/** From launch() called to launch() returned. */
	launchMs: number;
	/** From launch() called to the model's first request. */
	firstOutputMs: number;
	runSeconds: number;
	/** The container launcher's runtime secrets for the step (each a `podman secret create`). */
	secrets?: number;
}

/** The nearest-rank `p` percentile (0 without any). */
function percentile(ms: readonly number[], p: number): number {
	const sorted = [...ms].sort((a, b) => a - b);
	return sorted[Math.max(1, Math.ceil(sorted.length * p)) - 1] ?? 0;
}

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(0)} MB`;

/** A history line's instruction, shortened: no shell prefix, build args, secret mount or CA step. */
function instruction(createdBy: string): string {
	const s = createdBy
		.replace(/^\|\d+ .*? \/bin\/sh -c /, "RUN ")
		.replace(/^\/bin\/sh -c #\(nop\) /, "")
		.replace(/^\/bin\/sh -c /, "RUN ")
		.replace(/--mount=\S+\s+/, "")
		.replace(/if \[ -s \/run\/secrets\/npm-ca \].*?fi\s*&&\s*/, "")
		.replace(/(COPY|ADD) (?:file|dir|multi):[0-9a-f]+ in /, "$1 → ")
		.replace(/\s+/g, " ")
		.trim();
	return s.length > 80 ? `${s.slice(0, 79)}…` : s;
}

async function imageBytes(rt: ContainerRuntime, ref: string): Promise<number> {
	return Number(await runtimeCall(rt, ["image", "inspect", "--format", "{{.Size}}", ref]));
}

async function history(rt: ContainerRuntime, ref: string) {
	return JSON.parse(await runtimeCall(rt, ["history", "--format", "json", ref])) as {
		CreatedBy: string;
		size: number;
	}[];
}

/** The image's layers that have a size, the newest first; the base's own are marked. */
async function layers(rt: ContainerRuntime, ref: string, base?: string): Promise<Layer[]> {
	const rows = await history(rt, ref);
	const fromBase = base ? (await history(rt, base)).length : 0;
	return rows
		.map((r, i) => ({
			bytes: r.size,
			instruction: instruction(r.CreatedBy),
			base: i >= rows.length - fromBase,
		}))
		.filter((l) => l.bytes > 0);
}

/** Which base (the official one or the stand-in) the image was built on: its layers start with it. */
async function baseOf(rt: ContainerRuntime, ref: string): Promise<string | undefined> {
	const rootfs = async (r: string) =>
		JSON.parse(
			await runtimeCall(rt, ["image", "inspect", "--format", "{{json .RootFS.Layers}}", r]),
		) as string[];
	const mine = await rootfs(ref);
	for (const base of [OFFICIAL_BASE, STAND_IN.node]) {
		const theirs = await rootfs(base).catch(() => undefined);
		if (theirs?.every((l, i) => mine[i] === l)) return base;
	}
	return undefined;
}

/** The built-in agent's turns: commit a greeting, write the manifest, finish. */
const REPLIES = [
	bashReply(
		"Write the greeting and commit it.",
		"printf 'Hello\\n' > GREETING.md && git add -A && git commit -q -m 'feat: add a greeting'",
	),
	bashReply(
		"Write the manifest.",
		`cat <<'EOF' > .lisa-manifest.json\n{"prTitle": "feat: add a greeting", "prBody": "- **What**: a greeting\\n- **Testing**: none needed"}\nEOF`,
	),
	bashReply("Done.", "echo TASK_COMPLETE"),
];

/** A local stack with the built-in agent and its own model double, launch() and first request timed. */
async function timedStack(env: Record<string, string>) {
	const llm = await startOpenAiChatDouble();
	let marks: { called?: number; returned?: number; firstRequest?: number; secrets?: number } = {};
	// Answered by turn (the assistant messages so far), so a run that fails leaves nothing queued.
	llm.otherwise((req) => {
		const turn = req.messages.filter((m) => m.role === "assistant").length;
		if (turn === 0) marks.firstRequest ??= performance.now();
		return REPLIES[Math.min(turn, REPLIES.length - 1)] as string;
	});
	const w = await createStackWorld({
		configExtra: "models: [builtin]\nlimits: {max_attempts: 1}",
		env: {
			...env,
			LISA_LLM_BASE_URL: llm.url,
			LISA_LLM_API_KEY: llm.apiKey,
			LISA_LLM_MODEL: "local-model",
		},
	});
	const launcher = w.stack?.deps.launcher;
	if (!launcher) throw new Error("no stack");
	const launch = launcher.launch.bind(launcher);
	launcher.launch = async (req) => {
		marks.called ??= performance.now();
		if (launcher instanceof ContainerLauncher)
			marks.secrets ??= Object.keys(launcher.environment(req, 0).secret).length;
		const out = await launch(req);
		marks.returned ??= performance.now();
		return out;
	};
	let n = 0;
	return {
		async run(): Promise<Timing> {
			marks = {};
			const start = performance.now();
			const runId = await w.startRun(`Add greeting ${++n}`, "Add GREETING.md saying hello.");
			const run = await w.waitForRun(runId, (r) => isTerminalRun(r.status as RunStatus), 300_000);
			if (run.status !== "succeeded")
				throw new Error(`run ${runId} ${run.status}: ${run.error ?? run.steps[0]?.error ?? ""}`);
			const { called, returned, firstRequest } = marks;
			if (called === undefined || returned === undefined || firstRequest === undefined)
				throw new Error(`run ${runId}: no launch or no model request seen`);
			return {
				launchMs: returned - called,
				firstOutputMs: firstRequest - called,
				runSeconds: (performance.now() - start) / 1000,
				secrets: marks.secrets,
			};
		},
		stop: async () => {
			await w.stop();
			await llm.stop();
		},
	};
}

async function machine(rt: ContainerRuntime) {
	const info = (format: string) =>
		runtimeCall(rt, ["info", "--format", format]).then((s) => s.trim());
	return {
		cpu: os.cpus()[0]?.model,
		memoryGb: Math.round(os.totalmem() / 2 ** 30),
		kernel: os.release(),
		runtime: rt.name,
		runtimeVersion: await info("{{.Version.Version}}"),
		ociRuntime: await info("{{.Host.OCIRuntime.Name}}"),
		storageDriver: await info("{{.Store.GraphDriverName}}"),
		cgroups: await info("{{.Host.CgroupsVersion}}"),
	};
}

/** The four-CLI image and one image per CLI, built from this tree, their sizes and layers. */
async function measureImages(rt: ContainerRuntime, base: string | undefined) {
	const say = (line: string) => console.error(`image: ${line}`);
	const images = [];
	for (const cli of ["all", ...allClis()]) {
		const tag = `${BENCH_IMAGE}:${cli}`;
		const t = performance.now();
		await buildImage({ tag, clis: cli === "all" ? undefined : [cli], base, say });
		const buildSeconds = (performance.now() - t) / 1000;
		const ls = await layers(rt, tag, base);
		const cliLayerBytes = ls.find((l) => l.instruction.includes("npm install"))?.bytes;
		images.push({ cli, tag, bytes: await imageBytes(rt, tag), cliLayerBytes, buildSeconds, ls });
	}
	const [all, ...one] = images;
	if (!all) throw new Error("no image");
	return {
		all: { tag: all.tag, bytes: all.bytes, layers: all.ls },
		images: [all, ...one].map(({ ls: _, ...i }) => ({
			...i,
			ratio: i.bytes / all.bytes,
			withinTarget: i.cli === "all" ? undefined : i.bytes / all.bytes <= ONE_CLI_TARGET,
		})),
	};
}

/** Launch → first output on each launcher, alternating, after one warm-up each. */
async function measureLaunches(image: string) {
	const stacks = {
		container: await timedStack({ LISA_LAUNCHER: "container", LISA_IMAGE: image }),
		child: await timedStack({}),
	};
	const timings: Record<keyof typeof stacks, Timing[]> = { container: [], child: [] };
	const warmup: Partial<Record<keyof typeof stacks, Timing>> = {};
	try {
		for (const kind of ["container", "child"] as const) warmup[kind] = await stacks[kind].run();
		for (let i = 0; i < LAUNCHES; i++) {
			const order = i % 2 ? (["child", "container"] as const) : (["container", "child"] as const);
			for (const kind of order) {
				const t = await stacks[kind].run();
				timings[kind].push(t);
				console.error(`launch ${i + 1}/${LAUNCHES} ${kind}: ${t.firstOutputMs.toFixed(0)} ms`);
			}
		}
	} finally {
		await stacks.container.stop();
		await stacks.child.stop();
	}
	const median = (ts: Timing[], f: (t: Timing) => number) => percentile(ts.map(f), 0.5);
	const launchers = Object.entries(timings).map(([launcher, ts]) => {
		const first = ts.map((t) => t.firstOutputMs);
		return {
			launcher,
			medianMs: percentile(first, 0.5),
			p90Ms: percentile(first, 0.9),
			minMs: Math.min(...first),
			maxMs: Math.max(...first),
			launchReturnsMedianMs: median(ts, (t) => t.launchMs),
			thenFirstOutputMedianMs: median(ts, (t) => t.firstOutputMs - t.launchMs),
			runMedianSeconds: median(ts, (t) => t.runSeconds),
			secrets: ts[0]?.secrets,
			samples: ts,
		};
	});
	const [container, child] = launchers;
	if (!container || !child) throw new Error("no launches");
	const containerSlowerMs = container.medianMs - child.medianMs;
	return {
		measure: "launch() called → the built-in agent's first model request, on the local stack",
		targetSlowerMs: LAUNCH_TARGET_MS,
		runs: LAUNCHES,
		warmup,
		launchers,
		containerSlowerMs,
		ratio: container.medianMs / child.medianMs,
		withinTarget: containerSlowerMs <= LAUNCH_TARGET_MS,
	};
}

const verdict = (ok: boolean | undefined) => (ok === undefined ? "—" : ok ? "pass" : "MISS");

function printTables(
	host: Awaited<ReturnType<typeof machine>>,
	base: string | undefined,
	{ all, images }: Awaited<ReturnType<typeof measureImages>>,
	launch: Awaited<ReturnType<typeof measureLaunches>>,
): void {
	const pct = (n: number) => `${(n * 100).toFixed(1)}%`;
	console.log(
		`\nAgent image, four CLIs (${all.tag}), on ${base ?? "the base buildImage chose"}: ${mb(all.bytes)} uncompressed, ${host.runtime} ${host.runtimeVersion}, ${host.storageDriver}\n`,
	);
	console.log("| layer | size | share |");
	console.log("|---|---:|---:|");
	const shown = all.layers.filter((l) => l.bytes >= 1e6);
	for (const l of shown)
		console.log(
			`| ${l.base ? "(base) " : ""}\`${l.instruction.replaceAll("|", "\\|")}\` | ${mb(l.bytes)} | ${pct(l.bytes / all.bytes)} |`,
		);
	const rest = all.layers.filter((l) => l.bytes < 1e6);
	const restBytes = rest.reduce((n, l) => n + l.bytes, 0);
	console.log(`| ${rest.length} more layers under 1 MB | ${(restBytes / 1e3).toFixed(0)} kB | |`);

	console.log(
		`\nOne agent CLI an image (AGENT_CLIS=<cli>): target at most ${ONE_CLI_TARGET * 100}% of the four-CLI image\n`,
	);
	console.log("| AGENT_CLIS | image | CLI layer | of four-CLI | target | build s |");
	console.log("|---|---:|---:|---:|---|---:|");
	for (const r of images)
		console.log(
			`| ${r.cli === "all" ? allClis().join(" ") : r.cli} | ${mb(r.bytes)} | ${r.cliLayerBytes === undefined ? "?" : mb(r.cliLayerBytes)} | ${pct(r.ratio)} | ${verdict(r.withinTarget)} | ${r.buildSeconds.toFixed(0)} |`,
		);

	console.log(
		`\nlaunch() → the agent's first model request, built-in agent on the local stack, ${LAUNCHES} runs each alternating after one warm-up each; ${os.cpus().length} cores, ${host.ociRuntime}, cgroups ${host.cgroups}, kernel ${host.kernel}\n`,
	);
	console.log(
		"| launcher | median ms | p90 ms | min–max ms | launch() returns, median ms | then to first request, median ms | whole run, median s |",
	);
	console.log("|---|---:|---:|---:|---:|---:|---:|");
	for (const l of launch.launchers)
		console.log(
			`| ${l.launcher}${l.secrets === undefined ? "" : ` (${l.secrets} secrets)`} | ${l.medianMs.toFixed(0)} | ${l.p90Ms.toFixed(0)} | ${l.minMs.toFixed(0)}–${l.maxMs.toFixed(0)} | ${l.launchReturnsMedianMs.toFixed(0)} | ${l.thenFirstOutputMedianMs.toFixed(0)} | ${l.runMedianSeconds.toFixed(1)} |`,
		);
	console.log(
		`\ncontainer − child at the median: ${(launch.containerSlowerMs / 1000).toFixed(2)} s (×${launch.ratio.toFixed(2)}); target at most ${LAUNCH_TARGET_MS / 1000} s slower: ${verdict(launch.withinTarget)}`,
	);
}

async function main(): Promise<void> {
	process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
	const began = performance.now();
	const rt = await findRuntime();
	const host = await machine(rt);
	const base = await baseOf(rt, DEFAULT_IMAGE).catch(() => undefined);
	const sizes = await measureImages(rt, base);
	const launch = await measureLaunches(sizes.all.tag);
	printTables(host, base, sizes, launch);
	const seconds = (performance.now() - began) / 1000;
	console.log(`\nbench took ${(seconds / 60).toFixed(1)} min`);
	await writeResult("image", {
		machine: host,
		base,
		fourCli: sizes.all,
		oneCliTarget: ONE_CLI_TARGET,
		images: sizes.images,
		launch,
		seconds,
	});
	if (process.env.BENCH_IMAGE_CLEANUP === "1")
		await runtimeCall(rt, ["rmi", ...sizes.images.map((i) => i.tag)]);
}

main().catch((err) => {
	console.error(err);
	process.exit(1);
});
