import { egressAllowList } from "../../domain/egress";
import type { LaunchRepo } from "../../launcher/launcher";
import type { Timeline } from "../attempt/timeline";
import type { Broker } from "../broker/broker";
import type { AgentUser } from "../sandbox/process";
import { openAgentNamespace } from "./namespace";
import { EgressProxy } from "./proxy";

// `LISA_AGENT_NETWORK=allow-list` (set by the local launchers as root; README › Security): the
// agent's processes run in a network namespace of their own, reaching the broker and the egress
// proxy, which lets them reach the code host and the hosts the repositories' config allows.

/** Where the proxy listens inside the namespace: any port is free there. */
const PROXY_PORT = 3128;

export interface Confinement {
	proxy: EgressProxy;
	close(): Promise<void>;
}

/** Whether the launch asks for the agent's network to be confined (only with an agent user). */
export function confinesNetwork(env: NodeJS.ProcessEnv): boolean {
	return env.LISA_AGENT_NETWORK === "allow-list";
}

/** The hosts of the repositories' http(s) URLs: where the code is. */
function codeHosts(repos: readonly LaunchRepo[]): string[] {
	return repos.flatMap((r) => {
		try {
			const url = new URL(r.url);
			return url.protocol === "https:" || url.protocol === "http:" ? [url.hostname] : [];
		} catch {
			return [];
		}
	});
}

/** Confines `user`'s network: from now on runProcess starts its programs in the namespace. */
export async function confineAgent(
	user: AgentUser,
	broker: Broker,
	repos: readonly LaunchRepo[],
	timeline: Timeline,
): Promise<Confinement> {
	const configured = repos.flatMap((r) => r.allow ?? []);
	const hosts = codeHosts(repos);
	const proxy = new EgressProxy(
		(phase) => egressAllowList(phase, hosts, configured),
		(d) =>
			void timeline.add(
				"egress.denied",
				`the agent's connection to ${d.host}:${d.port} was refused (${d.phase}): the host is not on the allow-list`,
				{ ...d },
			),
	);
	const proxyPort = broker.port === PROXY_PORT ? PROXY_PORT + 1 : PROXY_PORT;
	const ns = await openAgentNamespace([broker.port, proxyPort]);
	broker.serve(ns.listeners.get(broker.port) as NonNullable<ReturnType<typeof ns.listeners.get>>);
	proxy.serve(ns.listeners.get(proxyPort) as NonNullable<ReturnType<typeof ns.listeners.get>>);
	const proxyUrl = `http://127.0.0.1:${proxyPort}`;
	user.network = {
		enter: () => ns.enter(user.uid, user.gid),
		env: {
			HTTP_PROXY: proxyUrl,
			HTTPS_PROXY: proxyUrl,
			http_proxy: proxyUrl,
			https_proxy: proxyUrl,
			NO_PROXY: "localhost,127.0.0.1,::1",
			no_proxy: "localhost,127.0.0.1,::1",
		},
	};
	return {
		proxy,
		async close() {
			user.network = undefined;
			proxy.close();
			await ns.close();
		},
	};
}
