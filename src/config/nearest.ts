// "Did you mean …?" for a misspelled config key: the closest of the valid names, if it is close.

/** Edits (insert, delete, substitute, swap two neighbours) that turn `a` into `b`. */
export function editDistance(a: string, b: string): number {
	const width = b.length + 1;
	const d = new Array<number>((a.length + 1) * width).fill(0);
	const at = (i: number, j: number) => d[i * width + j] ?? 0;
	for (let i = 0; i <= a.length; i++) d[i * width] = i;
	for (let j = 0; j <= b.length; j++) d[j] = j;
	for (let i = 1; i <= a.length; i++)
		for (let j = 1; j <= b.length; j++) {
			const cost = a[i - 1] === b[j - 1] ? 0 : 1;
			let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
			if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
				best = Math.min(best, at(i - 2, j - 2) + 1);
			d[i * width + j] = best;
		}
	return at(a.length, b.length);
}

/** The candidate nearest to `word` within a third of its length (at least 1, case ignored). */
export function nearest(word: string, candidates: readonly string[]): string | undefined {
	const w = word.toLowerCase();
	const limit = Math.max(1, Math.floor(w.length / 3));
	let best: { name: string; distance: number } | undefined;
	for (const name of candidates) {
		const distance = editDistance(w, name.toLowerCase());
		if (distance <= limit && (!best || distance < best.distance)) best = { name, distance };
	}
	return best?.name;
}
