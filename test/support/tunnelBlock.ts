/**
 * The `Host ocpool-desktop` block `ocpool tunnel setup` must write (SPEC §10.7), written out line by line
 * as the tests expect it (never built by the code under test), for a hop host and the default key.
 */
export const expectedTunnelBlock = (host: string): ReadonlyArray<string> => [
  "# >>> opencode-pool ocpool-desktop >>>",
  "Host ocpool-desktop",
  `  HostName ${host}`,
  "  IdentityFile ~/.ssh/ocpool_notify",
  "  IdentitiesOnly yes",
  "  BatchMode yes",
  "  ConnectTimeout 5",
  "  ControlMaster auto",
  "  ControlPath ~/.ssh/ocpool-%C",
  "  ControlPersist 10m",
  "  ClearAllForwardings yes",
  "  RequestTTY no",
  "  StrictHostKeyChecking accept-new",
  "# <<< opencode-pool ocpool-desktop <<<"
]
