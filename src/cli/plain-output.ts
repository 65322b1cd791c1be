// Imported by main.ts before citty. citty colours its help and errors unless NO_COLOR is exactly
// "1", deciding once when it is imported; the convention (no-color.org) is any non-empty NO_COLOR,
// and output that is not a terminal (a pipe, a file) gets no escape codes either.

const plain =
	!!process.env.NO_COLOR || process.stdout.isTTY !== true || process.stderr.isTTY !== true;

/** NO_COLOR was set only for citty's import; main.ts takes it back so child processes do not inherit it. */
export const noColorSetHere = plain && process.env.NO_COLOR !== "1";
if (noColorSetHere) process.env.NO_COLOR = "1";
