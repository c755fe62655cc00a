/** The e2e harness in one import: `import { ensureOpencode, startFakeLlm, startOpencode, fakeConfig } from "./harness.js"`. */
export { fakeConfig, FAKE_MODELS, type FakeConfigOptions, type OpencodeConfig } from "./config.js"
export { FAKE_LLM_SCRIPT, startFakeLlm, type FakeBehavior, type FakeLlm, type FakeQueueEntry, type FakeRequest, type FakeTaskSpec, type StartFakeLlmOptions } from "./fake.js"
export { e2eCacheRoot, ensureOpencode, INSTALL_TIMEOUT_MS, OPENCODE_VERSION, repoRoot, type EnsureOpencodeOptions } from "./opencode.js"
export { freePort, sleep } from "./processes.js"
export {
  OFFLINE_ENV,
  seedConfigDir,
  startOpencode,
  textOf,
  withPlugins,
  type HarnessDirs,
  type HarnessEvent,
  type HttpResult,
  type MessageWithParts,
  type OpencodeHandle,
  type PluginEntry,
  type PromptOptions,
  type RequestOptions,
  type SessionInfo,
  type SessionStatus,
  type StartOpencodeOptions
} from "./server.js"
