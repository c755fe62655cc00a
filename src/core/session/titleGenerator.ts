/**
 * opencode's title generator runs under the root's session id; its first system line says what it is
 * (opencode 1.18.33: "You are a title generator. You output ONLY a thread title. …"). Its requests are
 * never coached (US-49): the line would cost tokens on a request that only names the chat.
 */

export const TITLE_GENERATOR_PREFIX = "You are a title generator"

/** The first line of a system prompt as read: its value, or unreadable (a throwing getter, a revoked Proxy). */
export type FirstLine = { readonly readable: true; readonly value: unknown } | { readonly readable: false }

/**
 * Whether a system prompt may be the title generator's: its first line starts with
 * TITLE_GENERATOR_PREFIX, or cannot be read (it may be). An empty prompt (`undefined`: no first line) is not.
 */
export const maybeTitleGenerator = (first: FirstLine | undefined): boolean =>
  first !== undefined && (!first.readable || (typeof first.value === "string" && first.value.startsWith(TITLE_GENERATOR_PREFIX)))
