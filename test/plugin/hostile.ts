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

/** The traps `hostileArray` can make throw. */
export type Trap = "get" | "has" | "ownKeys" | "getOwnPropertyDescriptor" | "getPrototypeOf" | "set" | "defineProperty" | "deleteProperty" | "isExtensible" | "preventExtensions"

/**
 * A Proxy over the real array `items` (so `Array.isArray` holds) whose `traps` throw a `Boom`; the
 * `get` trap throws only for `keys` when they are given (`["length"]`: only the length is unreadable),
 * for every key otherwise. The other traps pass through to the array.
 */
export const hostileArray = (items: Array<unknown>, traps: ReadonlyArray<Trap>, keys?: ReadonlyArray<string>): Array<unknown> => {
  const handler: ProxyHandler<Array<unknown>> = {}
  const h = handler as Record<Trap, (...args: Array<unknown>) => unknown>
  for (const trap of traps) {
    h[trap] = (...args: Array<unknown>) => {
      if (trap === "get" && keys !== undefined && !keys.includes(String(args[1]))) return Reflect.get(...(args as [object, PropertyKey, unknown]))
      throw new Boom(`${trap} ${String(args[1] ?? "")}`)
    }
  }
  return new Proxy(items, handler)
}
