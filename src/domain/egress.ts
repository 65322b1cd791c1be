// The agent's egress allow-list (README › Egress): which hosts the egress proxy lets an attempt's
// agent reach. A pattern is a host name, an IP address, or `*.suffix` for every name under suffix.

/** A host pattern as the config and the proxy write it: lower case, no trailing dot, no port. */
export const HOST_PATTERN =
	/^(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/;

/**
 * The package registries the `setup` commands reach besides the config's hosts: they install what
 * the tests need (npm, PyPI, Go modules, crates.io, RubyGems, Maven Central), and run before any
 * text of the issue has reached an agent.
 */
export const SETUP_REGISTRIES: readonly string[] = [
	"registry.npmjs.org",
	"registry.yarnpkg.com",
	"pypi.org",
	"files.pythonhosted.org",
	"proxy.golang.org",
	"sum.golang.org",
	"index.crates.io",
	"static.crates.io",
	"crates.io",
	"rubygems.org",
	"index.rubygems.org",
	"repo.maven.apache.org",
	"repo1.maven.org",
];

/** `host` as the allow-list compares it: lower case, without a trailing dot or IPv6 brackets. */
export function normalHost(host: string): string {
	return host
		.trim()
		.toLowerCase()
		.replace(/^\[(.*)\]$/, "$1")
		.replace(/\.$/, "");
}

/** Whether `host` is on `allow`: named exactly, or under a `*.suffix` pattern (not the suffix itself). */
export function hostAllowed(host: string, allow: readonly string[]): boolean {
	const h = normalHost(host);
	if (!h) return false;
	return allow.some((p) => {
		const pattern = normalHost(p);
		return pattern.startsWith("*.") ? h.endsWith(pattern.slice(1)) : h === pattern;
	});
}

export type EgressPhase = "setup" | "agent";

/**
 * What a phase may reach: the code host and the hosts the repositories' config names; `setup` also
 * the package registries.
 */
export function egressAllowList(
	phase: EgressPhase,
	codeHosts: readonly string[],
	configured: readonly string[],
): string[] {
	const all = [...codeHosts, ...configured, ...(phase === "setup" ? SETUP_REGISTRIES : [])];
	return [...new Set(all.map(normalHost))];
}
