import { mkdir, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

/**
 * Writes a benchmark's figures, with the machine they were measured on, to
 * bench/results/<kind>-<time>.json and says where.
 */
export async function writeResult(kind: string, figures: Record<string, unknown>): Promise<void> {
	const at = new Date().toISOString();
	const out = path.join(import.meta.dirname, "results");
	await mkdir(out, { recursive: true });
	const file = path.join(out, `${kind}-${at.replace(/[:.]/g, "-")}.json`);
	const machine = { at, node: process.version, cores: os.cpus().length };
	await writeFile(file, JSON.stringify({ ...machine, ...figures }, null, 2));
	console.log(`wrote ${path.relative(process.cwd(), file)}`);
}
