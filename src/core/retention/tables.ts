/** The order in which a tree's rows leave the per-session tables (SPEC §11.3 step 1). */

export interface TableRefs {
  readonly name: string
  /** Other tables this one references through a foreign key. */
  readonly references: ReadonlyArray<string>
}

/** Tables that reference another table of the set come before it (`part` before `message`); otherwise by name. */
export const deletionOrder = (tables: ReadonlyArray<TableRefs>): ReadonlyArray<string> => {
  const names = new Set(tables.map((t) => t.name))
  const pending = [...tables].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  const out: Array<string> = []
  const placed = new Set<string>()
  while (pending.length > 0) {
    // A table can go once no pending table still references it.
    const index = pending.findIndex((t) => !pending.some((o) => o !== t && o.references.includes(t.name) && names.has(t.name)))
    const [next] = pending.splice(index === -1 ? 0 : index, 1)
    out.push(next!.name)
    placed.add(next!.name)
  }
  return out
}
