// Started by the task as root under `unshare --net` (namespace.ts): in the agent's network
// namespace of its own it brings up loopback, listens there on the ports given (the broker's and
// the egress proxy's), hands each listening socket to the task over the IPC channel, and then holds
// the namespace (/proc/<pid>/ns/net) until the task lets go of it.
import { execFileSync } from "node:child_process";
import net from "node:net";

execFileSync("ip", ["link", "set", "lo", "up"], { stdio: ["ignore", "ignore", "inherit"] });
for (const port of process.argv.slice(2).map(Number)) {
	const server = net.createServer();
	await new Promise((resolve, reject) => {
		server.once("error", reject);
		server.listen(port, "127.0.0.1", resolve);
	});
	await new Promise((resolve, reject) =>
		process.send({ port }, server, (err) => (err ? reject(err) : resolve())),
	);
	// The task holds the socket now; this copy would only take connections from it.
	server.close();
}
process.on("disconnect", () => process.exit(0));
