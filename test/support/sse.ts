// Reads a Server-Sent Events response the way a browser's EventSource does (id, event, data).

export interface SseMessage {
	event: string;
	data: string;
	id?: string;
}

async function* sseMessages(res: Response): AsyncGenerator<SseMessage> {
	if (!res.body) return;
	const decoder = new TextDecoder();
	let buffer = "";
	for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
		buffer += decoder.decode(chunk, { stream: true });
		let end = buffer.indexOf("\n\n");
		while (end >= 0) {
			const block = buffer.slice(0, end);
			buffer = buffer.slice(end + 2);
			end = buffer.indexOf("\n\n");
			const message: SseMessage = { event: "message", data: "" };
			const data: string[] = [];
			for (const line of block.split("\n")) {
				if (line.startsWith(":")) continue;
				const [field, ...rest] = line.split(":");
				const value = rest.join(":").replace(/^ /, "");
				if (field === "event") message.event = value;
				if (field === "data") data.push(value);
				if (field === "id") message.id = value;
			}
			if (data.length === 0) continue;
			message.data = data.join("\n");
			yield message;
		}
	}
}

/** Collects messages until `stop` says so or the stream ends. */
export async function collectSse(
	res: Response,
	stop: (m: SseMessage, all: SseMessage[]) => boolean = () => false,
): Promise<SseMessage[]> {
	const all: SseMessage[] = [];
	for await (const m of sseMessages(res)) {
		all.push(m);
		if (stop(m, all)) break;
	}
	return all;
}
