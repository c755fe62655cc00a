/** `ocpool metrics --listen HOST:PORT` (issue 36): the address parsed, or a one-line problem. Pure. */

export const DEFAULT_LISTEN = "127.0.0.1:9464"

export type Listen = { readonly _tag: "Listen"; readonly host: string; readonly port: number } | { readonly _tag: "Problem"; readonly message: string }

const problem = (text: string, why: string): Listen => ({ _tag: "Problem", message: `--listen ${JSON.stringify(text.slice(0, 80))}: ${why} (expected HOST:PORT, e.g. ${DEFAULT_LISTEN}, [::1]:9464 or :9464 for every interface)` })

const HOST = /^[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252})$/
const V6 = /^[0-9A-Fa-f:.]{2,45}(?:%[A-Za-z0-9_.-]{1,32})?$/

/** `HOST:PORT`, `[IPV6]:PORT`, or `:PORT` (every interface, 0.0.0.0); PORT 0 to 65535 (0: any free port). */
export const parseListen = (text: string): Listen => {
  const m = /^(?:\[([^\]]*)\]|([^:[\]]*)):([0-9]{1,5})$/.exec(text)
  if (m === null) return problem(text, text.includes(":") ? "not HOST:PORT" : "no port")
  const port = Number(m[3])
  if (port > 65535) return problem(text, "port out of range 0-65535")
  const v6 = m[1]
  if (v6 !== undefined) return V6.test(v6) && v6.includes(":") ? { _tag: "Listen", host: v6, port } : problem(text, "not an IPv6 address in brackets")
  const host = m[2] ?? ""
  if (host === "") return { _tag: "Listen", host: "0.0.0.0", port }
  return HOST.test(host) ? { _tag: "Listen", host, port } : problem(text, "not a host name or address")
}

/** The address as a URL's authority (an IPv6 address in brackets). */
export const authority = (host: string, port: number): string => `${host.includes(":") ? `[${host}]` : host}:${port}`
