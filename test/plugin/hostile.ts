/** Hostile values a hook may be handed: throwing getters, Proxies that throw on every trap, revoked Proxies, cycles, null prototypes. */

export class Boom extends Error {
  constructor(readonly where: string) {
    super(`boom: ${where}`)
  }
}

/** `base` with a getter and a setter that throw for each of `keys`: a `Boom` error, or what `thrown` makes (a revoked Proxy, say). */
export const throwingGetters = <T extends Record<string, unknown>>(base: T, keys: ReadonlyArray<string>, thrown: (where: string) => unknown = (w) => new Boom(w)): T => {
  const o: Record<string, unknown> = { ...base }
  for (const k of keys) {
    Object.defineProperty(o, k, {
      enumerable: true,
      get: () => {
        throw thrown(k)
      },
      set: () => {
        throw thrown(`set ${k}`)
      }
    })
  }
  return o as T
}

/** A Proxy over `target` whose every trap throws, except reads of the `allowed` keys. */
export const trapEverything = (target: Record<string, unknown> = {}, allowed: ReadonlyArray<string> = []): Record<string, unknown> => {
  const fail = (what: string) => () => {
    throw new Boom(what)
  }
  return new Proxy(target, {
    get: (t, k) => {
      if (typeof k === "string" && allowed.includes(k)) return t[k]
      throw new Boom(`get ${String(k)}`)
    },
    has: fail("has"),
    ownKeys: fail("ownKeys"),
    getOwnPropertyDescriptor: fail("getOwnPropertyDescriptor"),
    getPrototypeOf: fail("getPrototypeOf"),
    set: fail("set"),
    defineProperty: fail("defineProperty"),
    deleteProperty: fail("deleteProperty")
  })
}

/** A Proxy that has been revoked: `Array.isArray`, every read and `typeof`-then-read throws. */
export const revoked = (): Record<string, unknown> => {
  const { proxy, revoke } = Proxy.revocable({}, {})
  revoke()
  return proxy
}

/** An object reachable from itself. */
export const cyclic = (base: Record<string, unknown> = {}): Record<string, unknown> => {
  const o: Record<string, unknown> = { ...base }
  o.self = o
  o.list = [o, { back: o }]
  return o
}

/** An object without a prototype (no toString, no valueOf). */
export const nullProto = (base: Record<string, unknown> = {}): Record<string, unknown> => Object.assign(Object.create(null) as Record<string, unknown>, base)

/** A value whose conversion to a string throws. */
export const unprintable = (): Record<string, unknown> =>
  Object.assign(Object.create(null) as Record<string, unknown>, {
    toString: () => {
      throw new Boom("toString")
    },
    [Symbol.toPrimitive]: () => {
      throw new Boom("toPrimitive")
    }
  })
