/** Builds `SET …` / `REMOVE …` clauses with placeholders for every name and value. */
export class Expression {
	readonly names: Record<string, string> = {};
	readonly values: Record<string, unknown> = {};
	private readonly sets: string[] = [];
	private readonly removes: string[] = [];
	private n = 0;

	name(attr: string): string {
		const existing = Object.entries(this.names).find(([, v]) => v === attr)?.[0];
		if (existing) return existing;
		const p = `#n${this.n++}`;
		this.names[p] = attr;
		return p;
	}

	value(v: unknown): string {
		const p = `:v${this.n++}`;
		this.values[p] = v;
		return p;
	}

	assign(path: string, v: unknown): void {
		if (v === undefined) this.removes.push(path);
		else this.sets.push(`${path} = ${this.value(v)}`);
	}

	raw(clause: string): void {
		this.sets.push(clause);
	}

	toString(): string {
		return [
			this.sets.length ? `SET ${this.sets.join(", ")}` : "",
			this.removes.length ? `REMOVE ${this.removes.join(", ")}` : "",
		]
			.filter(Boolean)
			.join(" ");
	}
}
