import { constants } from "node:fs";
import { open } from "node:fs/promises";

/**
 * Reads a file the agent wrote (the manifest, the plan). The task may be root and the agent could
 * have made it a link to a file only root can read (whose text would then reach a pull request), or
 * a FIFO that never ends: only a regular file with a single name is read, never through a symbolic
 * link, and at most `maxBytes`.
 */
export async function readAgentFile(file: string, maxBytes: number): Promise<string> {
	const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
	try {
		const st = await handle.stat();
		if (!st.isFile()) throw new Error("it is not a regular file");
		if (st.nlink !== 1) throw new Error("it has other names (a hard link)");
		if (st.size > maxBytes) throw new Error(`it is larger than ${maxBytes} bytes`);
		const buf = Buffer.alloc(st.size);
		const { bytesRead } = await handle.read(buf, 0, st.size, 0);
		return buf.subarray(0, bytesRead).toString("utf8");
	} finally {
		await handle.close();
	}
}
