// Imported by main.ts before citty. citty colours its help and errors unless NO_COLOR is exactly
// "1", deciding once when it is imported; Lisa honours any non-empty NO_COLOR
// (docs/cli.md › Command line), and output that is not a terminal (a pipe, a file) gets no escape
// codes either.

const before = process.env.NO_COLOR;
const plain = !!before || process.stdout.isTTY !== true || process.stderr.isTTY !== true;
if (plain) process.env.NO_COLOR = "1";

/** NO_COLOR as it was before citty's import: child processes see the user's own setting. */
export function restoreNoColor(): void {
	if (before === undefined) delete process.env.NO_COLOR;
	else process.env.NO_COLOR = before;
}
