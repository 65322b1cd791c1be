// Text from outside (an agent's output, a CI log) made safe to print on a terminal: its escape
// sequences could recolour, retitle or rewrite the terminal of whoever reads it (`lisa logs`).

// CSI sequences (colours, cursor moves) and OSC ones (hyperlinks, titles) that tools print.
const ANSI =
	// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI escapes are control characters.
	/\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]/g;

/** Control characters (C0, DEL, C1) and format ones (bidi overrides, zero-width) that could disguise text. */
export const UNPRINTABLE = /[\p{Cc}\p{Cf}]/gu;

// The same, but tab and newline: what a multi-line text keeps.
const UNPRINTABLE_IN_LINES = /(?![\t\n])[\p{Cc}\p{Cf}]/gu;

export const stripAnsi = (text: string) => text.replace(ANSI, "");

/** `text` without escape sequences or control characters but tabs and newlines (CRLF as LF). */
export const printable = (text: string) =>
	stripAnsi(text).replace(/\r\n/g, "\n").replace(UNPRINTABLE_IN_LINES, "");
