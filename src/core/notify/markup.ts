/**
 * The body markup of notify-send (issue 18 item 10; SPEC §10.2, §10.5). Pure.
 *
 * The freedesktop notification spec lets a daemon render a small XML subset in the BODY (`<b>`, `<i>`,
 * `<u>`, `<a href>`, `<img src>`); many do (GNOME Shell, KDE, xfce4-notifyd, dunst, mako). A message is
 * text, never markup: its `&`, `<` and `>` are escaped as `&amp;`, `&lt;`, `&gt;`, so a `<a href=file:…>`
 * shows as written and is not a link, an `<img src=…>` fetches nothing, and a character reference
 * (`&#x202E;`) cannot bring back a control the cleaning removed. The SUMMARY is plain text by the spec
 * (dunst and mako escape it themselves), and osascript's `display notification` shows plain text, so
 * neither is escaped.
 *
 * The escape is applied once, when the notify-send argv is built, to the text already cleaned and
 * capped: the caps count the visible text (code points of the message as the user reads it), and an
 * escape is never cut in half. The hop payload carries the text unescaped.
 */

const BODY_MARKUP = /[&<>]/g
const ESCAPES: Readonly<Record<string, string>> = { "&": "&amp;", "<": "&lt;", ">": "&gt;" }

/** `&`, `<` and `>` as the body markup's escapes; nothing else changes. */
export const escapeBodyMarkup = (s: string): string => s.replace(BODY_MARKUP, (c) => ESCAPES[c]!)

/**
 * The body entry of the notify-send argv: the markup escaped, and every backslash doubled, since
 * notify-send reads C escapes (`\n`, `\t`, `\101`) in the body (not in the summary). The two never
 * interfere: an escape holds no backslash, a backslash is not markup.
 */
export const notifySendBody = (message: string): string => escapeBodyMarkup(message).replace(/\\/g, "\\\\")
