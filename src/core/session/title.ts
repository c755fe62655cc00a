/**
 * What a session's title says about its agent: the one title rule. opencode titles the session of a
 * `task` call `<description> (@<agent> subagent)` (opencode 1.18.33: `probe subagent (@explore-2
 * subagent)`), so a child's pooled variant can be read from its title when `info.agent` is absent
 * (SPEC §8.2, binding), and a session of the context agent is known by a mark naming it (SPEC §10.1).
 */

import { isRefreshTitle } from "../context/map.js"

/** A `(@<agent> subagent)` mark: the agent name has no parentheses and no whitespace. */
const MARK = /\(@([^()\s]+) subagent\)/g
/** The mark a title ends with (trailing whitespace allowed): where opencode puts it. */
const TRAILING_MARK = /\(@([^()\s]+) subagent\)\s*$/
/** A pooled variant's shape: a base and a slot number. */
const VARIANT_SHAPE = /^[a-z]+-[0-9]+$/
/** The context agent's names (SPEC §10.1). */
const CONTEXT_NAME = /^context(-\d+)?$/

/** The agent named by the mark a title ends with, or undefined. */
export const titleAgent = (title: string | undefined): string | undefined => (title === undefined ? undefined : TRAILING_MARK.exec(title)?.[1])

/** Every agent a title names in a mark, in order. */
export const titleAgents = (title: string | undefined): ReadonlyArray<string> => (title === undefined ? [] : Array.from(title.matchAll(MARK), (m) => m[1]!))

/**
 * The agent a child session was created for, as binding reads it: `info.agent`, else the agent its
 * title's closing mark names when that has a pooled variant's shape (`<base>-<n>`).
 */
export const childAgent = (agent: string | undefined, title: string | undefined): string | undefined => {
  if (agent !== undefined) return agent
  const named = titleAgent(title)
  return named !== undefined && VARIANT_SHAPE.test(named) ? named : undefined
}

/** Whether an agent name is the context agent's (`context`, `context-<n>`). */
export const isContextAgent = (name: string): boolean => CONTEXT_NAME.test(name)

/**
 * Whether a session belongs to the context agent: by its agent, by a mark in its title naming it, or by
 * the title of an automatic map refresh (`context (auto update)`, `context (auto bootstrap)`, issue 23).
 */
export const isContextSession = (agent: string | undefined, title: string | undefined): boolean =>
  (agent !== undefined && isContextAgent(agent)) || titleAgents(title).some(isContextAgent) || isRefreshTitle(title)
