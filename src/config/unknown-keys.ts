import type * as z from "zod";
import { nearest } from "./nearest";

// The fix for a key the config does not know (docs/config.md › Config): the nearest valid key at
// its place, else a field of that name elsewhere in the schema, else the keys valid there. Reads
// the zod schema's own definition, so it follows every field added to it.

type Walkable = {
	def: {
		type: string;
		shape?: Record<string, Walkable>;
		innerType?: Walkable;
		element?: Walkable;
		valueType?: Walkable;
		in?: Walkable;
	};
};

/** The object schema (if any) a value at `path` is checked against: through defaults, lists, records. */
function objectAt(schema: Walkable, path: readonly PropertyKey[]): Walkable | undefined {
	let here: Walkable | undefined = schema;
	for (let i = 0; here && i <= path.length; ) {
		const def: Walkable["def"] = here.def;
		if (def.type === "optional" || def.type === "default" || def.type === "nullable")
			here = def.innerType;
		else if (def.type === "pipe") here = def.in;
		else if (i === path.length) return def.type === "object" ? here : undefined;
		else {
			const key = String(path[i++]);
			if (def.type === "object") here = def.shape?.[key];
			else if (def.type === "array") here = def.element;
			else if (def.type === "record") here = def.valueType;
			else return undefined;
		}
	}
	return undefined;
}

/** Every field of the schema as `parent.key` (lists as `repos[].key`), for a key in the wrong place. */
function allFields(schema: Walkable, prefix = ""): string[] {
	const { def } = schema;
	const inner = def.innerType ?? def.in ?? def.element;
	if (inner) return allFields(inner, def.type === "array" ? `${prefix.slice(0, -1)}[].` : prefix);
	if (def.type !== "object" || !def.shape) return [];
	return Object.entries(def.shape).flatMap(([k, v]) => [
		`${prefix}${k}`,
		...allFields(v, `${prefix}${k}.`),
	]);
}

/** "did you mean `x`?" from the keys valid here, else from a field of that name elsewhere. */
export function unknownKeyFix(
	schema: z.ZodType,
	path: readonly PropertyKey[],
	key: string,
): string {
	const root = schema as unknown as Walkable;
	const here = Object.keys(objectAt(root, path)?.def.shape ?? {});
	const near = nearest(key, here);
	if (near) return `did you mean \`${near}\`?`;
	const fields = allFields(root);
	const elsewhere = nearest(
		key,
		fields.map((f) => f.slice(f.lastIndexOf(".") + 1)),
	);
	const field = elsewhere && fields.find((f) => f.endsWith(`.${elsewhere}`) || f === elsewhere);
	if (field) return `did you mean \`${field}\`? (it belongs there, not here)`;
	return `remove it; valid keys here: ${here.join(", ")}`;
}
