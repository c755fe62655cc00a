/** Notification constants (SPEC §1). */
export const NOTIFY_DEDUPE_MS = 5_000
export const NOTIFY_KEYS_MAX = 500
export const NOTIFY_TIMEOUT_MS = 5_000
export const HOP_CONNECT_TIMEOUT_S = 5
export const HOP_KILL_MS = 7_000
export const TITLE_MAX = 90
export const MESSAGE_MAX = 400
export const HEADLINE_MAX = 70
export const PAYLOAD_MAX_BYTES = 4_096
/** How long the receiving desktop remembers a popup for fade (SPEC §10.8). */
export const POPUP_TTL_MS = 86_400_000
