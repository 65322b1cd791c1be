import { closeSync, fstatSync, openSync, renameSync, writeSync } from "node:fs";

/** How much of a task's log is kept: the current file up to this size, and the one before it. */
const MAX_TASK_LOG_BYTES = 1024 * 1024;

/**
 * A local task's log file, bounded: past `maxBytes` the file becomes `<file>.1` (replacing an
 * older one) and a new file starts, so a chatty or hostile task never fills the disk.
 */
export class BoundedLog {
	private fd: number;
	private size: number;

	constructor(
		private readonly file: string,
		private readonly maxBytes = MAX_TASK_LOG_BYTES,
	) {
		this.fd = openSync(file, "a", 0o600);
		this.size = fstatSync(this.fd).size;
	}

	write(chunk: Buffer): void {
		if (this.size > 0 && this.size + chunk.length > this.maxBytes) this.rotate();
		// A single chunk larger than the bound keeps only its end.
		const data = chunk.length > this.maxBytes ? chunk.subarray(-this.maxBytes) : chunk;
		writeSync(this.fd, data);
		this.size += data.length;
	}

	close(): void {
		closeSync(this.fd);
	}

	private rotate(): void {
		closeSync(this.fd);
		renameSync(this.file, `${this.file}.1`);
		this.fd = openSync(this.file, "w", 0o600);
		this.size = 0;
	}
}
