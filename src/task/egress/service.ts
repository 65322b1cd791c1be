import { createServer, type Server } from "node:net";
import { HOST_PATTERN } from "../../domain/egress";
import type { Logger } from "../../log";
import { EgressProxy } from "./proxy";

// `agent.mjs egress-proxy`: the egress proxy as a service of its own, for AWS with
// LISA_AGENT_EGRESS=allow-list (docs/deploying.md › The agent's egress): the agent tasks, in
// subnets without a route out, reach the code host, the model APIs and the repositories'
// `network.allow` through it. It serves every task alike, so it cannot tell setup from the agent:
// one allow-list.

export interface EgressService {
	port: number;
	close(): Promise<void>;
}

/** The service's allow-list: LISA_EGRESS_ALLOW, comma-separated host patterns (`host[:port]`). */
function serviceAllowList(env: NodeJS.ProcessEnv): string[] {
	const allow = (env.LISA_EGRESS_ALLOW ?? "")
		.split(",")
		.map((h) => h.trim().toLowerCase())
		.filter(Boolean);
	const bad = allow.filter((h) => !HOST_PATTERN.test(h.replace(/:\d{1,5}$/, "")));
	if (bad.length)
		throw new Error(
			`LISA_EGRESS_ALLOW holds ${bad.join(", ")}: write host names, IPv4 addresses or *.domain, each with an optional :port`,
		);
	return allow;
}

/** Listens on LISA_EGRESS_PORT (default 3128) on every address; each refusal is a log line. */
export async function serveEgress(env: NodeJS.ProcessEnv, log: Logger): Promise<EgressService> {
	const allow = serviceAllowList(env);
	const proxy = new EgressProxy(
		() => allow,
		(d) => log.warn({ host: d.host, port: d.port }, "egress denied"),
	);
	const listener: Server = createServer();
	await new Promise<void>((resolve, reject) => {
		listener.once("error", reject);
		listener.listen(env.LISA_EGRESS_PORT ? Number(env.LISA_EGRESS_PORT) : 3128, resolve);
	});
	proxy.serve(listener);
	const port = (listener.address() as { port: number }).port;
	log.info({ allow, port }, "egress proxy listening");
	return {
		port,
		close: async () => {
			proxy.close();
			await new Promise((resolve) => listener.close(resolve));
		},
	};
}
