// Who may say yes to spending more in a Linear agent session (docs/cost.md › Cost and budgets):
// Linear's counterpart of GitHub's `author_association` for `/lisa continue` on a pull request.
// Pure: the pipeline asks Linear about the message's author, and this decides.

/** The author of a session message, as Linear tells of them now. */
export interface SessionAuthor {
	/** Linear's user id: what an approval records. */
	id: string;
	/** Their name: a label only. */
	name: string;
	/** False once the account is deactivated (suspended, left). */
	active: boolean;
	/** A guest of the workspace, limited to some teams. */
	guest: boolean;
	/** An app's user, not a person. */
	app: boolean;
	/** A member of the team the run's issue is in. */
	teamMember: boolean;
	/** That team's key, to say why not. */
	team?: string;
}

/**
 * Why the author may not approve spending, or undefined: only an active member of the team
 * who is neither a guest nor an app may.
 */
export function approverRefusal(author: SessionAuthor): string | undefined {
	const who = `${author.name} (Linear user ${author.id})`;
	if (!author.active) return `${who} is deactivated`;
	if (author.app) return `${who} is an app`;
	if (author.guest) return `${who} is a guest of the workspace`;
	if (!author.teamMember)
		return `${who} is not a member of the issue's team ${author.team ?? ""}`.trim();
	return undefined;
}
