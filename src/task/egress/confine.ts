import { egressAllowList, serverOf } from "../../domain/egress";
import type { LaunchRepo } from "../../launcher/launcher";
import type { Broker } from "../broker/broker";
import type { Timeline } from "../report/timeline";
import type { AgentUser } from "../sandbox/process";
import { openAgentNamespace } from "./namespace";
import { EgressProxy } from "./proxy";

// `LISA_AGENT_NETWORK=allow-list` (set by the local launchers as root;
// docs/security.md › Security): the agent's processes run in a network namespace of their own,
// reaching the broker and the egress proxy, which lets them reach the code host and the hosts the
// repositories' config allows.

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

/** Confines `user`'s network: from now on runProcess starts its programs in the namespace. */
export async function confineAgent(
	user: AgentUser,
	broker: Broker,
	repos: readonly LaunchRepo[],
	timeline: Timeline,
): Promise<Confinement> {
	const configured = repos.flatMap((r) => r.allow ?? []);
	// The code host on its port alone: where it shares a machine's loopback with other services
	// (a self-hosted git server), the agent reaches none of them through it.
	const hosts = repos.flatMap((r) => serverOf(r.url) ?? []);
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
	const [toBroker, toProxy] = ns.listeners;
	if (toBroker) broker.serve(toBroker);
	if (toProxy) proxy.serve(toProxy);
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
