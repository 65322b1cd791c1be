// Text from outside (an agent's output, a CI log) made safe to print on a terminal: its escape
// sequences could recolour, retitle or rewrite the terminal of whoever reads it (`lisa logs`).

// CSI sequences (colours, cursor moves) and OSC ones (hyperlinks, titles) that tools print.
const ANSI =
	// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI escapes are control characters.
	/\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]/g;

// Every other control character but tab and newline (a bare ESC, CR, C1's CSI), and the bidi
// overrides that could make a line read other than it is.
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it removes.
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

export const stripAnsi = (text: string) => text.replace(ANSI, "");

/** `text` without escape sequences or control characters but tabs and newlines (CRLF as LF). */
export const printable = (text: string) =>
	stripAnsi(text).replace(/\r\n/g, "\n").replace(CONTROLS, "");
