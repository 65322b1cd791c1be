import { existsSync } from "node:fs";
import { chromium } from "playwright-core";

// The dashboard's browser tests drive Debian's Chromium (.ci/run installs it) with playwright-core,
// never a downloaded browser; without it (or CHROMIUM_PATH) they are skipped.

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
export const hasChromium = existsSync(CHROMIUM);

/** Headless, quiet: no sandbox (CI runs as root), no GPU, no background traffic. */
const ARGS = [
	"--no-sandbox",
	"--disable-gpu",
	"--disable-quic",
	"--no-first-run",
	"--disable-background-networking",
	"--disable-component-update",
	"--disable-sync",
];

/** Chromium headless, quiet, with a throwaway profile. */
export const launchChromium = () => chromium.launch({ executablePath: CHROMIUM, args: ARGS });

/** Chromium with its profile in `dir`, kept after it closes: its history and sessions can be read. */
export const launchChromiumProfile = (dir: string) =>
	chromium.launchPersistentContext(dir, { executablePath: CHROMIUM, args: ARGS });
