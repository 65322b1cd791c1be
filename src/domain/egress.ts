// The agent's egress allow-list (docs/security.md › Security): which hosts the egress proxy lets an
// attempt's agent reach. A pattern is a host name, an IP address, or `*.suffix` for every name
// under suffix, any port; the code host is allowed on its own port only (`host:port`).

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

/** The code host the token is for: github.com, or the host of GITHUB_API_URL (GitHub Enterprise). */
export function codeHost(apiUrl: string | undefined): string {
	if (!apiUrl) return "github.com";
	const host = new URL(apiUrl).hostname;
	return host === "api.github.com" ? "github.com" : host;
}

/** `host` as the allow-list compares it: lower case, without a trailing dot or IPv6 brackets. */
export function normalHost(host: string): string {
	return host
		.trim()
		.toLowerCase()
		.replace(/^\[(.*)\]$/, "$1")
		.replace(/\.$/, "");
}

/**
 * Whether `host:port` is on `allow`: the host named exactly (with that port, when the pattern has
 * one), or under a `*.suffix` pattern (not the suffix itself).
 */
export function hostAllowed(host: string, port: number, allow: readonly string[]): boolean {
	const h = normalHost(host);
	if (!h) return false;
	return allow.some((entry) => {
		const [, name = "", only] = /^(.*?)(?::(\d+))?$/.exec(entry) ?? [];
		const pattern = normalHost(name);
		if (only !== undefined && Number(only) !== port) return false;
		return pattern.startsWith("*.") ? h.endsWith(pattern.slice(1)) : h === pattern;
	});
}

/** Where an http(s) URL's server is, as an allow-list entry (`host:port`), or undefined. */
export function serverOf(url: string): string | undefined {
	try {
		const u = new URL(url);
		if (u.protocol !== "https:" && u.protocol !== "http:") return undefined;
		return `${normalHost(u.hostname)}:${u.port || (u.protocol === "https:" ? 443 : 80)}`;
	} catch {
		return undefined;
	}
}

export type EgressPhase = "setup" | "agent";

/**
 * What a phase may reach: the code host (`host:port`) and the hosts the repositories' config names;
 * `setup` also the package registries.
 */
export function egressAllowList(
	phase: EgressPhase,
	codeHosts: readonly string[],
	configured: readonly string[],
): string[] {
	const all = [...codeHosts, ...configured, ...(phase === "setup" ? SETUP_REGISTRIES : [])];
	return [...new Set(all.map((e) => e.trim().toLowerCase()))];
}
