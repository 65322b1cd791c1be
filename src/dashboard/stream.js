// @ts-check
/** @import { RunState } from "./run-page.js" */
import { authorization, out, signal, unauthorized } from "./api.js";

// A run's live stream (GET /api/runs/:id/stream, docs/http-api.md › HTTP API), read with fetch:
// EventSource cannot send the Authorization header. The run, then its timeline, then its end; asked
// again from the last event seen when the answer ends (a buffering gateway ends each one).

/** @typedef {{ event: string, data: string, id?: string, retry?: number }} SseMessage */

const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));
const live = (/** @type {string} */ text) => {
	/** @type {HTMLElement} */ (document.getElementById("live")).textContent = text;
};

/**
 * The server-sent events of a body.
 * @param {ReadableStream<Uint8Array>} body
 * @returns {AsyncGenerator<SseMessage>}
 */
async function* sse(body) {
	const reader = body.getReader();
	const decoder = new TextDecoder();
	let buffer = "";
	for (;;) {
		const { value, done } = await reader.read();
		if (done) return;
		buffer += decoder.decode(value, { stream: true });
		for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
			const block = buffer.slice(0, end);
			buffer = buffer.slice(end + 2);
			/** @type {SseMessage} */
			const m = { event: "message", data: "" };
			/** @type {string[]} */
			const data = [];
			for (const line of block.split("\n")) {
				if (!line || line[0] === ":") continue;
				const colon = line.indexOf(":");
				const field = colon < 0 ? line : line.slice(0, colon);
				const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
				if (field === "data") data.push(value);
				else if (field === "event") m.event = value;
				else if (field === "id") m.id = value;
				else if (field === "retry") m.retry = Number(value);
			}
			if (data.length) {
				m.data = data.join("\n");
				yield m;
			}
		}
	}
}

/**
 * Follows run `id` into `state` until it ended (or the page was signed out), drawing after each
 * message.
 * @param {string} id @param {RunState} state @param {() => void} draw
 */
export async function follow(id, state, draw) {
	let retry = 2000;
	while (!out()) {
		const headers = authorization();
		if (state.lastId) headers["last-event-id"] = state.lastId;
		/** @type {Response} */
		let res;
		try {
			res = await fetch(`/api/runs/${id}/stream`, { headers, signal });
		} catch {
			await sleep(retry);
			continue;
		}
		if (res.status === 401) throw unauthorized();
		// A run just requested exists once intake took it: wait a little before saying it does not.
		if (res.status === 404 && ++state.missing < 15) {
			state.waiting = true;
			draw();
			await sleep(2000);
			continue;
		}
		if (!res.ok) throw new Error((await res.json().catch(() => ({}))).error || res.statusText);
		live("· live");
		try {
			for await (const m of sse(/** @type {ReadableStream<Uint8Array>} */ (res.body))) {
				if (m.retry) retry = m.retry;
				if (m.event === "run") state.run = JSON.parse(m.data);
				if (m.event === "timeline") {
					state.events.push(JSON.parse(m.data));
					state.lastId = m.id;
				}
				if (m.event === "end") state.ended = true;
				draw();
			}
		} catch {
			// The stream broke off: ask again below.
		}
		live("");
		if (state.ended) return;
		// A buffering gateway ends each answer; ask again after what the server said.
		await sleep(retry);
	}
}
