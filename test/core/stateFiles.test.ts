import { describe, expect, it } from "@effect/vitest"
import { decodeClaimFile, encodeClaimFile } from "../../src/core/pool/claimFile.js"
import type { Cooldown } from "../../src/core/pool/cooldown.js"
import { decodeCooldown, encodeCooldown } from "../../src/core/pool/cooldownFile.js"
import { DEFAULTS, parseSettings } from "../../src/core/options.js"

const json = (v: unknown): string => JSON.stringify(v)
/** `depth` arrays nested in one another. */
const nested = (depth: number): string => "[".repeat(depth) + "]".repeat(depth)

const CLAIM = {
  base: "explore",
  slot: 1,
  model: "zen/alpha",
  acquiredAt: 1796115601000,
  heartbeatAt: 1796115601000,
  ownerSession: "ses_p",
  targetSession: null,
  abortAttempts: 0,
  abortPending: false
}
/** The example of SPEC §5.1, as `encodeClaimFile` writes it. */
const SPEC_CLAIM_FILE =
  '{"version":1,"pid":4242,"startTime":"8123456","host":"devbox","writtenAt":1796115601000,"reaped":0,' +
  '"claims":{"ses_p:call_1":{"base":"explore","slot":1,"model":"zen/alpha","acquiredAt":1796115601000,"heartbeatAt":1796115601000,' +
  '"ownerSession":"ses_p","targetSession":null,"abortAttempts":0,"abortPending":false}}}'
const claimFile = (claims: Record<string, unknown>, fields: Record<string, unknown> = {}): string => json({ version: 1, pid: 4242, ...fields, claims })
const decodedClaim = (key: string, fields: Record<string, unknown> = {}) => ({
  key,
  ...CLAIM,
  abortOrigin: null,
  abortInFlight: false,
  endedInFlight: false,
  ...fields
})

describe("claim file decoding (SPEC §5.1)", () => {
  it("US-6 the SPEC example decodes field by field, and encodes back byte for byte", () => {
    const f = decodeClaimFile(SPEC_CLAIM_FILE)
    expect(f).toStrictEqual({ pid: 4242, startTime: "8123456", host: "devbox", writtenAt: 1796115601000, reaped: 0, claims: [decodedClaim("ses_p:call_1")] })
    expect(encodeClaimFile(f!)).toBe(SPEC_CLAIM_FILE)
  })

  it("US-6 a pending abort read from a file has the origin signal; no decoded claim is in flight", () => {
    const f = decodeClaimFile(claimFile({ a: { ...CLAIM, abortPending: true, abortAttempts: 2 } }))
    expect(f?.claims).toStrictEqual([decodedClaim("a", { abortPending: true, abortAttempts: 2, abortOrigin: "signal" })])
  })

  it("US-6 a file with only pid and claims gets the defaults: startTime null, host empty, writtenAt and reaped 0", () => {
    expect(decodeClaimFile('{"pid":7,"claims":{}}')).toStrictEqual({ pid: 7, startTime: null, host: "", writtenAt: 0, reaped: 0, claims: [] })
  })

  it.each([
    ["startTime a number", { startTime: 8123456 }],
    ["host null", { host: null }],
    ["writtenAt a numeric string", { writtenAt: "1796115601000" }],
    ["reaped an object", { reaped: { n: 1 } }],
    ["every optional field deeply nested", { startTime: [[["x"]]], host: { a: { b: { c: "devbox" } } }, writtenAt: [[1]], reaped: [[[0]]] }]
  ])("US-6 file field of the wrong type reads as its default: %s", (_, fields) => {
    expect(decodeClaimFile(claimFile({}, fields))).toStrictEqual({ pid: 4242, startTime: null, host: "", writtenAt: 0, reaped: 0, claims: [] })
  })

  it("US-6 a claim with only base, model and the two times gets the defaults", () => {
    const f = decodeClaimFile(claimFile({ k: { base: "b", model: "m", acquiredAt: 1, heartbeatAt: 2 } }))
    expect(f?.claims).toStrictEqual([
      { key: "k", base: "b", slot: 0, model: "m", acquiredAt: 1, heartbeatAt: 2, ownerSession: null, targetSession: null, abortAttempts: 0, abortPending: false, abortOrigin: null, abortInFlight: false, endedInFlight: false }
    ])
  })

  it.each([
    ["slot a string", { slot: "1" }, { slot: 0 }],
    ["ownerSession a number", { ownerSession: 5 }, { ownerSession: null }],
    ["targetSession an object", { targetSession: { id: "ses_c" } }, { targetSession: null }],
    ["abortAttempts null", { abortAttempts: null }, { abortAttempts: 0 }],
    ["abortPending the string true", { abortPending: "true" }, { abortPending: false, abortOrigin: null }],
    ["abortPending 1", { abortPending: 1 }, { abortPending: false, abortOrigin: null }],
    ["extra fields", { extra: [1, 2], version: 9 }, {}]
  ])("US-6 claim field of the wrong type reads as its default: %s", (_, fields, expected) => {
    expect(decodeClaimFile(claimFile({ k: { ...CLAIM, ...fields } }))?.claims).toStrictEqual([decodedClaim("k", expected)])
  })

  it.each([
    ["not JSON", "claims"],
    ["empty", ""],
    ["truncated", SPEC_CLAIM_FILE.slice(0, -2)],
    ["an array", json([{ pid: 1, claims: {} }])],
    ["null", "null"],
    ["a number", "4242"],
    ["a string", '"claims"'],
    ["pid missing", json({ claims: {} })],
    ["pid a numeric string", json({ pid: "4242", claims: {} })],
    ["pid NaN as a string", json({ pid: "NaN", claims: {} })],
    ["pid null", json({ pid: null, claims: {} })],
    ["pid deeply nested", json({ pid: [[[[4242]]]], claims: {} })],
    ["claims missing", json({ pid: 4242 })],
    ["claims an array", json({ pid: 4242, claims: [CLAIM] })],
    ["claims null", json({ pid: 4242, claims: null })],
    ["claims a string", json({ pid: 4242, claims: "{}" })],
    ["deep garbage", nested(5_000)]
  ])("US-6 an unusable claim file decodes to undefined: %s", (_, text) => {
    expect(decodeClaimFile(text)).toBeUndefined()
  })

  it.each([
    ["base missing", { ...CLAIM, base: undefined }],
    ["base a number", { ...CLAIM, base: 1 }],
    ["model null", { ...CLAIM, model: null }],
    ["acquiredAt a numeric string", { ...CLAIM, acquiredAt: "1796115601000" }],
    ["heartbeatAt NaN as a string", { ...CLAIM, heartbeatAt: "NaN" }],
    ["heartbeatAt Infinity as a string", { ...CLAIM, heartbeatAt: "Infinity" }],
    ["heartbeatAt deeply nested", { ...CLAIM, heartbeatAt: [[[1]]] }],
    ["the claim an array", [CLAIM]],
    ["the claim a string", json(CLAIM)],
    ["the claim null", null],
    ["the claim a number", 7]
  ])("US-6 an invalid claim is skipped and the others kept: %s", (_, bad) => {
    const f = decodeClaimFile(claimFile({ first: CLAIM, bad, last: CLAIM }))
    expect(f?.claims.map((c) => c.key)).toEqual(["first", "last"])
  })

  it("US-9 numbers out of range are invalid values: a pid of 1e999 spoils the file, a claim time beyond ±8.64e15 or a fractional slot drops the claim", () => {
    expect(decodeClaimFile('{"pid":1e999,"claims":{}}')).toBeUndefined()
    expect(decodeClaimFile('{"pid":0,"claims":{}}')).toBeUndefined()
    expect(decodeClaimFile('{"pid":1.5,"claims":{}}')).toBeUndefined()
    const claims = (fields: Record<string, unknown>) => decodeClaimFile(claimFile({ first: CLAIM, bad: { ...CLAIM, ...fields } }))?.claims.map((c) => c.key)
    for (const bad of [{ acquiredAt: 2 ** 64 }, { heartbeatAt: 8.64e15 + 1 }, { acquiredAt: -1e16 }]) expect(claims(bad)).toEqual(["first"])
    expect(decodeClaimFile(claimFile({ k: { ...CLAIM, slot: 1e400, abortAttempts: -1 } }))?.claims[0]).toMatchObject({ slot: 0, abortAttempts: 0 })
    expect(decodeClaimFile('{"pid":1,"writtenAt":1e16,"reaped":-3,"claims":{}}')).toMatchObject({ writtenAt: 0, reaped: 0 })
  })

  it("US-6 a deeply nested value in an ignored field does not spoil the file", () => {
    const text = `{"pid":1,"extra":${nested(2_000)},"claims":{"k":{"base":"b","model":"m","acquiredAt":1,"heartbeatAt":2,"extra":${nested(2_000)}}}}`
    expect(decodeClaimFile(text)?.claims.map((c) => c.key)).toEqual(["k"])
  })

  it("US-6 claim keys keep their order, odd keys included", () => {
    const f = decodeClaimFile(`{"pid":1,"claims":{"z":${json(CLAIM)},"__proto__":${json(CLAIM)},"constructor":${json(CLAIM)},"":${json(CLAIM)}}}`)
    expect(f?.claims.map((c) => c.key)).toEqual(["z", "__proto__", "constructor", ""])
  })
})

const COOLDOWN: Cooldown = { model: "zen/alpha", reason: "rate_limit", strikes: 2, scope: "model", since: 1796115610000, until: 1796115730000, source: "header" }
const cooldownWith = (fields: Record<string, unknown>): string => json({ version: 1, ...COOLDOWN, ...fields })

describe("cooldown file decoding (SPEC §5.4)", () => {
  it("US-6 the SPEC example decodes as written, and a record survives encode then decode", () => {
    expect(decodeCooldown(cooldownWith({}))).toStrictEqual(COOLDOWN)
    const quota: Cooldown = { ...COOLDOWN, reason: "quota", scope: "provider", source: "retry" }
    expect(decodeCooldown(encodeCooldown(quota))).toStrictEqual(quota)
  })

  it("US-44 a free tier refused to pooled work keeps its reason entitlement through a file, not the rate_limit default (issue 35)", () => {
    const refused: Cooldown = { ...COOLDOWN, reason: "entitlement", strikes: 0, scope: "provider", source: "flat" }
    expect(decodeCooldown(encodeCooldown(refused))).toStrictEqual(refused)
  })

  it("US-6 a file with only model and until gets the defaults: rate_limit, 0 strikes, scope model, since = until, source flat", () => {
    expect(decodeCooldown('{"model":"zen/alpha","until":5}')).toStrictEqual({ model: "zen/alpha", reason: "rate_limit", strikes: 0, scope: "model", since: 5, until: 5, source: "flat" })
  })

  it.each([
    ["an unknown reason", { reason: "slow" }, { reason: "rate_limit" }],
    ["a reason in capitals", { reason: "QUOTA" }, { reason: "rate_limit" }],
    ["a reason of another type", { reason: 5 }, { reason: "rate_limit" }],
    ["each known reason is kept: hang", { reason: "hang" }, { reason: "hang" }],
    ["each known reason is kept: auth", { reason: "auth" }, { reason: "auth" }],
    ["strikes a string", { strikes: "2" }, { strikes: 0 }],
    ["scope provider", { scope: "provider" }, { scope: "provider" }],
    ["scope global", { scope: "global" }, { scope: "model" }],
    ["scope null", { scope: null }, { scope: "model" }],
    ["since a string", { since: "1796115610000" }, { since: COOLDOWN.until }],
    ["since missing", { since: undefined }, { since: COOLDOWN.until }],
    ["source missing", { source: undefined }, { source: "flat" }],
    ["source a number", { source: 7 }, { source: "flat" }],
    ["source any other string, kept as written", { source: "whatever" }, { source: "whatever" }]
  ])("US-6 cooldown field read tolerantly: %s", (_, fields, expected) => {
    expect(decodeCooldown(cooldownWith(fields))).toStrictEqual({ ...COOLDOWN, ...expected })
  })

  it.each([
    ["not JSON", "cooldown"],
    ["empty", ""],
    ["an array", json([COOLDOWN])],
    ["null", "null"],
    ["a number", "1796115730000"],
    ["model missing", cooldownWith({ model: undefined })],
    ["model a number", cooldownWith({ model: 1 })],
    ["until missing", cooldownWith({ until: undefined })],
    ["until a numeric string", cooldownWith({ until: "1796115730000" })],
    ["until NaN as a string", cooldownWith({ until: "NaN" })],
    ["until null", cooldownWith({ until: null })],
    ["until deeply nested", cooldownWith({ until: [[[[1]]]] })],
    ["deep garbage", nested(5_000)]
  ])("US-6 an unusable cooldown file decodes to undefined: %s", (_, text) => {
    expect(decodeCooldown(text)).toBeUndefined()
  })

  it.each([["1e999 (Infinity)", "1e999"], ["1e16", "1e16"], ["8.64e15 + 1", "8640000000000001"], ["-1e16", "-1e16"]])(
    "US-9 an until beyond the date range is an invalid value and the file unusable: %s",
    (_, until) => {
      expect(decodeCooldown(`{"model":"m","until":${until}}`)).toBeUndefined()
    }
  )

  it("US-9 the date range's ends are still times; a since or strikes out of range reads as its default", () => {
    expect(decodeCooldown('{"model":"m","until":8.64e15}')?.until).toBe(8.64e15)
    expect(decodeCooldown('{"model":"m","until":5,"since":1e16,"strikes":-2}')).toMatchObject({ since: 5, strikes: 0 })
  })
})

describe("plugin options (SPEC §2.2-2.3)", () => {
  it("US-15 no options and an empty environment give the defaults without a warning", () => {
    expect(parseSettings(undefined, {})).toStrictEqual({ settings: DEFAULTS, warnings: [] })
    expect(parseSettings({}, {})).toStrictEqual({ settings: DEFAULTS, warnings: [] })
  })

  it("US-15 valid options are kept, bounds included", () => {
    const models = { slots: [{ model: "zen/a" }] }
    const { settings, warnings } = parseSettings(
      {
        enabled: true,
        models,
        modelsFile: "~/p.txt",
        maxSlots: 8,
        stateDir: "/s",
        reapMs: 1000,
        hangMinAgeMs: 2 ** 53 - 1,
        hangSilenceMs: 1000,
        firstTokenMs: 3000,
        lockWaitMs: 60_000,
        trace: "/t",
        logLevel: "debug",
        notify: false,
        notifyVia: "ssh",
        notifyHost: "desk",
        sound: false,
        fade: false,
        delegate: false,
        quotaReserve: 0.1,
        coach: false,
        fallbackModels: [" zen/a ", "go/b"],
        permits: { heavy: 1024, gpu: 1 },
        heavyCommands: false,
        contextMap: { maxBytes: 1 }
      },
      {}
    )
    expect(warnings).toEqual([])
    expect(settings).toStrictEqual({
      enabled: true,
      models,
      modelsFile: "~/p.txt",
      maxSlots: 8,
      stateDir: "/s",
      reapMs: 1000,
      hangMinAgeMs: 2 ** 53 - 1,
      hangSilenceMs: 1000,
      firstTokenMs: 3000,
      lockWaitMs: 60_000,
      trace: "/t",
      logLevel: "debug",
      notify: false,
      notifyVia: "ssh",
      notifyHost: "desk",
      sound: false,
      fade: false,
      omniroute: undefined,
      delegate: false,
      quotaReserve: 0.1,
      coach: false,
      fallbackModels: ["zen/a", "go/b"],
      permits: [
        { name: "heavy", capacity: 1024, source: "option" },
        { name: "gpu", capacity: 1, source: "option" }
      ],
      heavy: false,
      keyBudgets: true,
      metrics: true,
      state: { backend: "sqlite" },
      contextMap: { enabled: true, maxBytes: 1 }
    })
    expect(settings.models).toBe(models)
    expect(parseSettings({ lockWaitMs: 0 }, {}).settings.lockWaitMs).toBe(0)
  })

  it("US-29 notification options of the wrong type or value warn once each and keep their defaults", () => {
    const { settings, warnings } = parseSettings({ notify: "yes", notifyVia: "desktop", notifyHost: 7, sound: 0, fade: null }, {})
    expect([settings.notify, settings.notifyVia, settings.notifyHost, settings.sound, settings.fade]).toEqual([true, "auto", undefined, true, true])
    expect(warnings).toEqual([
      "option notify must be a boolean; using true",
      'option notifyVia "desktop" invalid (auto, local, ssh or none), using auto',
      "option notifyHost must be a string; ignored",
      "option sound must be a boolean; using true",
      "option fade must be a boolean; using true"
    ])
  })

  it.each([
    ["reapMs", 999, "option reapMs 999 invalid (an integer 1000 or more), using 30000"],
    ["reapMs", "fast", 'option reapMs "fast" invalid (an integer 1000 or more), using 30000'],
    ["reapMs", "30000", 'option reapMs "30000" invalid (an integer 1000 or more), using 30000'],
    ["reapMs", "NaN", 'option reapMs "NaN" invalid (an integer 1000 or more), using 30000'],
    ["reapMs", null, "option reapMs null invalid (an integer 1000 or more), using 30000"],
    ["reapMs", "a-)", 'option reapMs "a-)" invalid (an integer 1000 or more), using 30000'],
    ["hangMinAgeMs", 1500.5, "option hangMinAgeMs 1500.5 invalid (an integer 1000 or more), using 300000"],
    ["hangMinAgeMs", 2 ** 53, "option hangMinAgeMs 9007199254740992 invalid (an integer 1000 or more), using 300000"],
    ["hangSilenceMs", Infinity, "option hangSilenceMs null invalid (an integer 1000 or more), using 180000"],
    ["hangSilenceMs", NaN, "option hangSilenceMs null invalid (an integer 1000 or more), using 180000"],
    ["hangSilenceMs", [[[5000]]], "option hangSilenceMs [[[5000]]] invalid (an integer 1000 or more), using 180000"],
    ["firstTokenMs", 999, "option firstTokenMs 999 invalid (an integer 1000 or more), using 90000"],
    ["firstTokenMs", "90s", 'option firstTokenMs "90s" invalid (an integer 1000 or more), using 90000'],
    ["firstTokenMs", false, "option firstTokenMs false invalid (an integer 1000 or more), using 90000"],
    ["lockWaitMs", 60_001, "option lockWaitMs 60001 invalid (an integer 0-60000), using 250"],
    ["lockWaitMs", -1, "option lockWaitMs -1 invalid (an integer 0-60000), using 250"],
    ["lockWaitMs", true, "option lockWaitMs true invalid (an integer 0-60000), using 250"],
    ["lockWaitMs", { ms: 5 }, 'option lockWaitMs {"ms":5} invalid (an integer 0-60000), using 250'],
    ["maxSlots", 9, "option maxSlots 9 invalid (an integer 1-8), using 4"],
    ["maxSlots", 0, "option maxSlots 0 invalid (an integer 1-8), using 4"],
    ["maxSlots", "4", 'option maxSlots "4" invalid (an integer 1-8), using 4'],
    ["modelsFile", 5, "option modelsFile must be a string; ignored"],
    ["stateDir", { path: "/s" }, "option stateDir must be a string; ignored"],
    ["trace", ["/t"], "option trace must be a string; ignored"],
    ["logLevel", 5, "option logLevel must be a string; ignored"],
    ["logLevel", "loud", 'log level "loud" invalid (debug, info, warn or error), using info'],
    ["enabled", "false", "option enabled must be a boolean; using true"],
    ["enabled", 0, "option enabled must be a boolean; using true"],
    ["models", [], "option models must be an object with slots; ignored"],
    ["models", null, "option models must be an object with slots; ignored"],
    ["models", "zen/a", "option models must be an object with slots; ignored"]
  ])("US-15 option %s = %j warns once and keeps the default", (name, value, warning) => {
    const { settings, warnings } = parseSettings({ [name]: value }, {})
    expect(warnings).toEqual([warning])
    expect(settings).toStrictEqual(DEFAULTS)
  })

  it("US-15 several bad options warn in a fixed order: enabled, maxSlots, models, logLevel, modelsFile, stateDir, the times, trace", () => {
    const { warnings } = parseSettings(
      { trace: 1, lockWaitMs: -1, hangSilenceMs: 1, hangMinAgeMs: 1, reapMs: 1, stateDir: 1, modelsFile: 1, logLevel: "x", models: 1, maxSlots: 99, enabled: 1 },
      {}
    )
    expect(warnings.map((w) => /^(?:option|log level) (\S+)/.exec(w)![1])).toEqual([
      "enabled",
      "maxSlots",
      "models",
      '"x"',
      "modelsFile",
      "stateDir",
      "reapMs",
      "hangMinAgeMs",
      "hangSilenceMs",
      "lockWaitMs",
      "trace"
    ])
  })

  it.each([
    ["an option in any case and with spaces", { logLevel: " WARN " }, {}, "warn", []],
    ["the environment over the option", { logLevel: "loud" }, { OCPOOL_LOG_LEVEL: "error" }, "error", []],
    ["an empty environment falls back to the option", { logLevel: "debug" }, { OCPOOL_LOG_LEVEL: "" }, "debug", []],
    ["an invalid environment", {}, { OCPOOL_LOG_LEVEL: "verbose" }, "info", ['log level "verbose" invalid (debug, info, warn or error), using info']],
    [
      "an option of the wrong type still warns under a valid environment",
      { logLevel: 5 },
      { OCPOOL_LOG_LEVEL: "debug" },
      "debug",
      ["option logLevel must be a string; ignored"]
    ]
  ])("US-15 log level: %s", (_, options, env, level, expected) => {
    const { settings, warnings } = parseSettings(options, env)
    expect(settings.logLevel).toBe(level)
    expect(warnings).toEqual(expected)
  })

  it("US-15 OCPOOL_TRACE wins over the option, and then a bad trace option is not even looked at", () => {
    expect(parseSettings({ trace: 5 }, { OCPOOL_TRACE: "/env" })).toStrictEqual({ settings: { ...DEFAULTS, trace: "/env" }, warnings: [] })
    expect(parseSettings({ trace: "/opt" }, { OCPOOL_TRACE: "" }).settings.trace).toBe("/opt")
  })

  it.each([
    ["enabled false", { enabled: false }, {}, false],
    ["enabled the string false", { enabled: "false" }, {}, true],
    ["OCPOOL_DISABLE yes", {}, { OCPOOL_DISABLE: "Yes" }, false],
    ["OCPOOL_DISABLE cannot turn it on", { enabled: false }, { OCPOOL_DISABLE: "0" }, false]
  ])("US-17 enabled: %s", (_, options, env, enabled) => {
    expect(parseSettings(options, env).settings.enabled).toBe(enabled)
  })
})
