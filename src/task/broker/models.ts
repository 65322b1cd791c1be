// Which models a run may ask the broker for (docs/security.md › Security): the one its `models`
// entry names, as the API spells it. With none named, the CLI's choice stands.

/** What follows a model's name in a snapshot of it. */
const SNAPSHOT = /^(?:-\d{8}|-\d{4}-\d{2}-\d{2}|@\d{8}|-latest)$/;

/**
 * Whether `requested` is the model `configured` names: the same id; the id after OpenCode's
 * `provider/` prefix; a dated snapshot of it (`claude-sonnet-4-5-20250929`, `gpt-4.1-2025-04-14`);
 * or, for a one-word alias (`opus`, `flash`), a model of that family.
 */
export function modelAllowed(configured: string | undefined, requested: string): boolean {
	if (!configured || configured === "auto") return true;
	const c = configured.replace(/\[[^\]]*\]$/, ""); // Claude Code's context suffix: `sonnet[1m]`
	if (requested === c || c.endsWith(`/${requested}`)) return true;
	if (requested.startsWith(c) && SNAPSHOT.test(requested.slice(c.length))) return true;
	return /^[a-z]+$/.test(c) && requested.split(/[-/.]/).includes(c);
}
