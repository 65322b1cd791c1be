// Where every HTTP double listens: loopback only, on a free port unless given one.
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";

/** What `serve` takes from an app: its `fetch` (a Hono app of any environment). */
type App = Pick<Parameters<typeof serve>[0], "fetch">;

export interface Served {
	port: number;
	/** Closes the server and the connections a client keeps alive: a test never waits on them. */
	stop(): Promise<void>;
}

export async function serveLocal(app: App, at = 0): Promise<Served> {
	const { server, port } = await new Promise<{ server: ReturnType<typeof serve>; port: number }>(
		(resolve, reject) => {
			const server = serve({ fetch: app.fetch, port: at, hostname: "127.0.0.1" }, (info) =>
				resolve({ server, port: (info as AddressInfo).port }),
			);
			server.once("error", reject);
		},
	);
	return {
		port,
		stop: () =>
			new Promise<void>((resolve, reject) => {
				server.close((err) => (err ? reject(err) : resolve()));
				if ("closeAllConnections" in server) server.closeAllConnections();
			}),
	};
}
