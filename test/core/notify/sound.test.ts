import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { notifySendArgs, osascriptArgs } from "../../../src/core/notify/channel.js"
import { notificationFor } from "../../../src/core/notify/content.js"
import { iconOf, LINUX_SOUND, MAC_SOUND, soundOf, SOUNDS, soundsOn, urgencyOf } from "../../../src/core/notify/sound.js"

const shown = (sound: string) => ({ title: "opencode — T", message: "M", urgency: "normal" as const, icon: "emblem-default" as const, sound: soundOf(sound) })

describe("silencing (SPEC §2.2, §10.3)", () => {
  it("US-29 option sound:false and no environment variable: sounds are off, and a done carries `none`", () => {
    expect(soundsOn(false, undefined)).toBe(false)
    expect(notificationFor("done", {}, soundsOn(false, undefined)).sound).toBe("none")
  })

  it.each(["0", "FALSE", " off ", "no", "False", "OFF", "\tNo\n"])("US-29 OCPOOL_SOUND=%j silences sounds even with sound:true", (env) => {
    expect(soundsOn(true, env)).toBe(false)
    expect(soundsOn(false, env)).toBe(false)
  })

  it("US-29 sound:false with OCPOOL_SOUND=1 turns sound on", () => {
    expect(soundsOn(false, "1")).toBe(true)
    expect(notificationFor("done", {}, soundsOn(false, "1")).sound).toBe("done")
  })

  it.each(["flase", "1", "yes", "on", "true", "quiet"])("US-29 a non-silencing OCPOOL_SOUND=%j turns sound on whatever the option", (env) => {
    expect(soundsOn(false, env)).toBe(true)
    expect(soundsOn(true, env)).toBe(true)
  })

  it.each([undefined, "", "   "])("US-29 an empty or unset OCPOOL_SOUND (%j) leaves the decision to the option", (env) => {
    expect(soundsOn(true, env)).toBe(true)
    expect(soundsOn(false, env)).toBe(false)
  })
})

describe("the sound whitelist (SPEC §10.3)", () => {
  it.each(["../../x.wav", "$(rm -rf ~)", "chime", "/usr/share/sounds/x.oga", "done; id", "Glass", "complete", ""])("US-29 the sound name %j is treated as `none`", (name) => {
    expect(soundOf(name)).toBe("none")
    expect(notifySendArgs(shown(name), false).some((a) => a.includes("sound-name"))).toBe(false)
    expect(osascriptArgs(shown(name))).toEqual(["-e", "on run argv", "-e", "display notification (item 2 of argv) with title (item 1 of argv)", "-e", "end run", "opencode — T", "M"])
  })

  it("US-29 sound values are trimmed and case-insensitive", () => {
    expect(soundOf(" Done ")).toBe("done")
    expect(soundOf("QUESTION")).toBe("question")
    expect(soundOf(undefined)).toBe("none")
    expect(soundOf(3)).toBe("none")
  })

  it.prop("US-29 whatever the name, the sound is one of the whitelist and maps only to a fixed table entry", [fc.string()], ([name]) => {
    const s = soundOf(name)
    expect(SOUNDS).toContain(s)
    const hints = notifySendArgs(shown(name), false).filter((a) => a.startsWith("--hint="))
    expect(hints.every((h) => Object.values(LINUX_SOUND).some((v) => h === `--hint=string:sound-name:${v}`))).toBe(true)
    const mac = osascriptArgs(shown(name))
    expect(mac.length === 8 || Object.values(MAC_SOUND).includes(mac[8])).toBe(true)
  })

  it("US-18 urgency and icon whitelists fall back to normal and utilities-terminal", () => {
    expect(urgencyOf("low --icon=dialog-error")).toBe("normal")
    expect(urgencyOf(" CRITICAL ")).toBe("critical")
    expect(iconOf("../x")).toBe("utilities-terminal")
    expect(iconOf("Dialog-Error")).toBe("dialog-error")
  })
})

describe("sound hints on Linux and sound names on macOS (SPEC §10.3)", () => {
  it.each([
    ["done", "complete", "Glass"],
    ["question", "message-new-instant", "Ping"],
    ["permission", "dialog-warning", "Hero"],
    ["error", "dialog-error", "Basso"]
  ] as const)("US-29 a %s notification carries the sound-name hint %s (macOS %s)", (kind, hint, mac) => {
    const n = notificationFor(kind, {}, true)
    const argv = notifySendArgs(n, false)
    expect(argv.filter((a) => a.startsWith("--hint="))).toEqual([`--hint=string:sound-name:${hint}`])
    expect(argv.indexOf(`--hint=string:sound-name:${hint}`)).toBeLessThan(argv.indexOf("--"))
    const script = osascriptArgs(n)
    expect(script[3]).toBe("display notification (item 2 of argv) with title (item 1 of argv) sound name (item 3 of argv)")
    expect(script.slice(6)).toEqual([n.title, n.message, mac])
  })

  it("US-29 the sound `none` gives no hint and no sound clause", () => {
    const n = notificationFor("done", {}, false)
    expect(notifySendArgs(n, false).some((a) => a.startsWith("--hint"))).toBe(false)
    expect(osascriptArgs(n).join(" ")).not.toContain("sound name")
  })
})
