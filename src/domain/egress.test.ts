import { expect, it } from "vitest";
import { egressAllowList, HOST_PATTERN, hostAllowed, SETUP_REGISTRIES, serverOf } from "./egress";

it("allows a host named exactly or under a *.suffix, in any case, and nothing that only ends alike", () => {
	const allow = ["registry.npmjs.org", "*.example.com", "10.0.0.5"];
	expect(hostAllowed("registry.npmjs.org", 443, allow)).toBe(true);
	expect(hostAllowed("Registry.NPMjs.org.", 443, allow)).toBe(true);
	expect(hostAllowed("a.b.example.com", 443, allow)).toBe(true);
	expect(hostAllowed("example.com", 443, allow)).toBe(false);
	expect(hostAllowed("evilexample.com", 443, allow)).toBe(false);
	expect(hostAllowed("registry.npmjs.org.evil.io", 443, allow)).toBe(false);
	expect(hostAllowed("10.0.0.5", 443, allow)).toBe(true);
	expect(hostAllowed("10.0.0.50", 443, allow)).toBe(false);
	expect(hostAllowed("", 443, ["*."])).toBe(false);
});

it("allows the code host on its own port only", () => {
	const allow = [
		serverOf("http://127.0.0.1:8123/acme/api.git") ?? "",
		serverOf("https://GitHub.com/a/b") ?? "",
	];
	expect(allow).toEqual(["127.0.0.1:8123", "github.com:443"]);
	expect(hostAllowed("127.0.0.1", 8123, allow)).toBe(true);
	expect(hostAllowed("127.0.0.1", 8000, allow)).toBe(false);
	expect(hostAllowed("github.com", 22, allow)).toBe(false);
	expect(serverOf("file:///srv/git/api.git")).toBeUndefined();
	expect(serverOf("not a url")).toBeUndefined();
});

it("gives setup the registries besides the code host and the config's hosts, and the agent only those", () => {
	const agent = egressAllowList("agent", ["github.com"], ["Pypi.org", "*.corp.example"]);
	expect(agent).toEqual(["github.com", "pypi.org", "*.corp.example"]);
	const setup = egressAllowList("setup", ["github.com"], []);
	expect(setup).toEqual(["github.com", ...SETUP_REGISTRIES]);
});

it("takes host names, IPv4 addresses and *.domain as patterns, and nothing with a scheme, port or path", () => {
	for (const ok of ["github.com", "*.npmjs.org", "10.1.2.3", "localhost"])
		expect(HOST_PATTERN.test(ok)).toBe(true);
	for (const bad of ["https://github.com", "github.com:443", "a/b", "*", "*.*.x", "a..b", ""])
		expect(HOST_PATTERN.test(bad)).toBe(false);
});
