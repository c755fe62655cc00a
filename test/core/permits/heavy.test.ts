import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { chainOf, compileHeavyRules, DEFAULT_HEAVY_RULES, HEAVY_SCAN_MAX, heavyOf, unwrap } from "../../../src/core/permits/heavy.js"

/** Every built-in pattern: a command it must catch and a near miss it must leave alone. */
const BUILTIN_CASES: ReadonlyArray<readonly [heavy: string, light: string]> = [
  ["npm test", "npm view react"],
  ["npm run test", "npm run lint"],
  ["npm run test:unit -- --watch=false", "npm run testimony"],
  ["npm run build:prod", "npm run dev"],
  ["npm t", "npm ls"],
  ["npm run-script build", "npm run-script start"],
  ["pnpm test", "pnpm why effect"],
  ["pnpm --filter web build", "pnpm --filter web dev"],
  ["pnpm -r test", "pnpm -r outdated"],
  ["yarn build", "yarn why effect"],
  ["yarn test:e2e", "yarn info react"],
  ["bun test", "bun --version"],
  ["bun run build", "bun run dev"],
  ["npm ci", "npm config list"],
  ["npm install", "npm init -y"],
  ["npm i -D vitest", "npm info vitest"],
  ["pnpm install --frozen-lockfile", "pnpm list"],
  ["yarn install", "yarn list"],
  ["yarn", "yarn --version"],
  ["bun install", "bun pm ls"],
  ["npx vitest run", "npx prettier --check ."],
  ["npx jest --ci", "npx eslint ."],
  ["npx tsc --noEmit -p .", "npx cowsay hi"],
  ["pnpm exec vitest", "pnpm exec prettier"],
  ["bunx tsc", "bunx cowsay"],
  ["node_modules/.bin/jest", "node_modules/.bin/prettier"],
  ["cargo build --release", "cargo fmt"],
  ["cargo test -p core", "cargo tree"],
  ["cargo check", "cargo metadata"],
  ["cargo clippy -- -D warnings", "cargo search serde"],
  ["cargo run --release -- --help", "cargo run -- --help"],
  ["cargo +nightly build", "cargo +nightly fmt"],
  ["go build ./...", "go env GOPATH"],
  ["go test ./... -race", "go mod tidy"],
  ["go vet ./...", "go version"],
  ["make", "cat Makefile"],
  ["make -j8 all", "echo make"],
  ["/usr/bin/make install", "makefile-lint"],
  ["cmake --build build -j", "cmake --version"],
  ["ninja -C out", "ninjas"],
  ["pytest -x tests/", "pytest-watch-config"],
  ["python -m pytest -q", "python -m http.server"],
  ["python3 -m pytest", "python3 script.py"],
  ["uv run pytest", "uv pip list"],
  ["tox -e py312", "toxic"],
  ["mvn -q package", "mvnd-info"],
  ["./mvnw verify", "ls ./mvnw"],
  ["gradle build", "gradle-info"],
  ["./gradlew test", "cat ./gradlew"],
  ["tsc -b", "tscfg"],
  ["vitest run", "vitestconfig"],
  ["jest --coverage", "jester"],
  ["docker build -t app .", "docker ps"],
  ["docker buildx build --platform linux/amd64 .", "docker buildx ls"],
  ["docker compose build web", "docker compose ps"],
  ["docker compose -f ci.yml build", "docker compose -f ci.yml logs"],
  ["podman build .", "podman images"],
  ["bazel build //...", "bazel info"],
  ["bazel test //pkg:all", "bazel version"],
  ["dotnet build", "dotnet --info"],
  ["dotnet test", "dotnet new console"],
  ["swift build", "swift --version"],
  ["swift test", "swift package describe"],
  ["mix test", "mix format"],
  ["mix compile", "mix deps.get"],
  ["sbt compile", "sbtx"],
  ["rustc main.rs", "rustup show"],
  ["gcc -O2 -o a a.c", "gcc-config"],
  ["g++ -std=c++20 a.cc", "g++-info"],
  ["clang -c a.c", "clang-format -i a.c"],
  ["clang++ a.cc", "clangd --check"],
  ["webpack --mode production", "webpack-cli-info"],
  ["vite build", "vite"],
  ["next build", "next dev"],
  ["esbuild src/a.ts --bundle", "esbuildx"],
  ["rollup -c", "rollups"]
]

const rules = DEFAULT_HEAVY_RULES

describe("heavy commands: the built-in patterns", () => {
  for (const [heavy, light] of BUILTIN_CASES) {
    it(`US-51 ${JSON.stringify(heavy)} is heavy, ${JSON.stringify(light)} is not`, () => {
      expect(heavyOf(heavy, rules)).toEqual({ budget: "heavy", weight: 1, matched: heavy })
      expect(heavyOf(light, rules)).toBeUndefined()
    })
  }

  it("US-51 near misses: quoted, echoed, read or listed mentions of a heavy command are light", () => {
    for (const light of [
      "npm view",
      'git commit -m "npm test"',
      "git commit -m 'make all && cargo build'",
      "echo make",
      "cat Makefile",
      "ls build/",
      "rg 'npm test' docs",
      "grep -rn make src",
      "command -v make",
      "which cargo",
      "man make",
      "echo npm\\ test",
      "ls # npm test",
      "cat <<EOF\nnpm test\nmake all\nEOF",
      "cat <<'EOF' > notes.md\ncargo build\nEOF\nls",
      "cat <<-EOF\n\tmake\n\tEOF\necho done",
      "git log --grep=build"
    ]) {
      expect(heavyOf(light, rules), light).toBeUndefined()
    }
  })
})

describe("heavy commands found where they hide (issue 33 item 18)", () => {
  it("US-51 xargs, find -exec/-execdir, $(…) and backticks inside double quotes, docker compose up --build are heavy", () => {
    for (const [command, matched] of [
      ["find . -name '*.c' | xargs make", "make"],
      ["xargs -P4 -n 1 -I {} make -C {}", "make -C {}"],
      ["find . -name Makefile -exec make -C {} \\;", "make -C {}"],
      ["find crates -maxdepth 1 -type d -execdir cargo build ';'", "cargo build"],
      ['echo "built: $(make all 2>&1 | tail -1)"', "make all 2>&1"],
      ['echo "result `npm test`"', "npm test"],
      ["docker compose up --build", "docker compose up --build"],
      ["docker compose -f dev.yml up -d --build web", "docker compose -f dev.yml up -d --build web"],
      ["docker-compose up --build=true", "docker-compose up --build=true"]
    ] as const) {
      expect(heavyOf(command, rules)?.matched, command).toBe(matched)
    }
  })

  it("US-51 and their near misses stay light", () => {
    for (const light of ["xargs echo", "find . -exec ls {} +", 'echo "$(date) $(git rev-parse HEAD)"', "echo '$(make)'", "docker compose up -d", "docker compose build-status"]) {
      expect(heavyOf(light, rules), light).toBeUndefined()
    }
  })
})

describe("heavy commands: chains, quotes and wrappers", () => {
  it("US-51 each element of a chain counts: && || ; | & newlines, subshells and backticks", () => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      ["cd web && npm test", "npm test"],
      ["git pull || make", "make"],
      ["ls; cargo build", "cargo build"],
      ["cat log | jest --ci", "jest --ci"],
      ["npm test 2>&1 | tail -n 50", "npm test 2>&1"],
      ["npm run build &> build.log", "npm run build &> build.log"],
      ["make & sleep 1", "make"],
      ["echo start\nnpm test\necho end", "npm test"],
      ["(cd sub && make)", "make"],
      ["echo $(go test ./...)", "go test ./..."],
      ["echo `make`", "make"],
      ["cat <<EOF | cat\nhello\nEOF\ncargo test", "cargo test"],
      ["if [ -f Makefile ]; then make; fi", "make"],
      ["for d in a b; do go test ./$d; done", "go test ./$d"],
      ["{ make; }", "make"],
      ["! pytest", "pytest"]
    ]
    for (const [command, matched] of cases) expect(heavyOf(command, rules), command).toEqual({ budget: "heavy", weight: 1, matched })
  })

  it("US-51 separators inside quotes or escaped do not split", () => {
    expect(chainOf(`echo "a && make" ; ls 'b | cargo build'`)).toEqual([`echo "a && make"`, `ls 'b | cargo build'`])
    expect(chainOf("echo a \\&\\& make")).toEqual(["echo a \\&\\& make"])
    expect(chainOf(`echo "it's \\"fine\\"; make"`)).toEqual([`echo "it's \\"fine\\"; make"`])
    expect(chainOf("printf 'a\nb'")).toEqual(["printf 'a\nb'"])
    expect(heavyOf(`echo "unterminated; make`, rules)).toBeUndefined()
  })

  it("US-51 env assignments and sudo, time, nice, env, exec, command, nohup, timeout are stripped", () => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      ["CI=1 npm test", "npm test"],
      ["NODE_OPTIONS='--max-old-space-size=4096' FOO=\"a b\" npm run build", "npm run build"],
      ["sudo make install", "make install"],
      ["sudo -u builder -E make", "make"],
      ["time cargo build", "cargo build"],
      ["time -p pytest", "pytest"],
      ["nice -n 10 make -j2", "make -j2"],
      ["nice -5 make", "make"],
      ["env CC=clang make", "make"],
      ["env -u DISPLAY npm test", "npm test"],
      ["exec npm test", "npm test"],
      ["command make", "make"],
      ["nohup cargo build", "cargo build"],
      ["timeout 600 npm test", "npm test"],
      ["timeout -k 5 10m make", "make"],
      ["FOO=1 sudo -E nice -n 5 time env BAR=2 make -j4", "make -j4"]
    ]
    for (const [command, matched] of cases) expect(heavyOf(command, rules), command).toEqual({ budget: "heavy", weight: 1, matched })
    expect(unwrap("FOO=1 BAR=2")).toBe("")
    expect(heavyOf("FOO=make", rules)).toBeUndefined()
    expect(heavyOf("timeouts make", rules)).toBeUndefined()
  })
  it("US-51 a shell's -c script is judged too (two levels deep)", () => {
    expect(heavyOf(`bash -c "npm test"`, rules)).toEqual({ budget: "heavy", weight: 1, matched: "npm test" })
    expect(heavyOf(`sh -c 'cd web && make'`, rules)).toEqual({ budget: "heavy", weight: 1, matched: "make" })
    expect(heavyOf(`bash -lc "echo \\"hi\\"; cargo build"`, rules)).toEqual({ budget: "heavy", weight: 1, matched: "cargo build" })
    expect(heavyOf(`sh -c "sh -c 'make'"`, rules)).toEqual({ budget: "heavy", weight: 1, matched: "make" })
    expect(heavyOf(`sh -c 'echo make'`, rules)).toBeUndefined()
    expect(heavyOf(`bash scripts/check.sh`, rules)).toBeUndefined()
  })
})

describe("heavy commands: the user's rules", () => {
  it("US-51 user patterns are tried first, with their weight and budget; the chain counts as its heaviest element", () => {
    const user = compileHeavyRules({
      patterns: [
        { regex: "^docker run .*--gpus", weight: 2, budget: "gpu" },
        { regex: "^./scripts/e2e\\.sh", weight: 3 },
        { regex: "^npm test", weight: 2 }
      ]
    })
    expect(heavyOf("docker run --rm --gpus all img", user)).toEqual({ budget: "gpu", weight: 2, matched: "docker run --rm --gpus all img" })
    expect(heavyOf("CI=1 ./scripts/e2e.sh --fast", user)).toEqual({ budget: "heavy", weight: 3, matched: "./scripts/e2e.sh --fast" })
    // first match wins over the built-ins: npm test weighs 2 here
    expect(heavyOf("npm test", user)).toEqual({ budget: "heavy", weight: 2, matched: "npm test" })
    // heaviest element of the chain; ties go to the first
    expect(heavyOf("make && ./scripts/e2e.sh && npm test", user)).toEqual({ budget: "heavy", weight: 3, matched: "./scripts/e2e.sh" })
    expect(heavyOf("make; cargo build", user)).toEqual({ budget: "heavy", weight: 1, matched: "make" })
    expect(heavyOf("npm test; docker run --gpus all x", user)).toEqual({ budget: "heavy", weight: 2, matched: "npm test" })
    expect(heavyOf("docker run --gpus all x; npm test", user)).toEqual({ budget: "gpu", weight: 2, matched: "docker run --gpus all x" })
  })

  it("US-51 an ignore regex that matches the command makes it light", () => {
    const user = compileHeavyRules({ ignore: ["^make (help|clean)\\b", "--version"] })
    expect(heavyOf("make help", user)).toBeUndefined()
    expect(heavyOf("cargo build --version", user)).toBeUndefined()
    expect(heavyOf("make all", user)).toEqual({ budget: "heavy", weight: 1, matched: "make all" })
    expect(heavyOf("cd x && make help", user)).toEqual({ budget: "heavy", weight: 1, matched: "make help" })
  })

  it("US-51 compiling skips an invalid regex instead of throwing", () => {
    const user = compileHeavyRules({ patterns: [{ regex: "(" }, { regex: "^deploy", weight: 2 }], ignore: ["[", "^make help"] })
    expect(user.patterns).toHaveLength(1)
    expect(user.ignore).toHaveLength(1)
    expect(heavyOf("deploy now", user)?.weight).toBe(2)
  })
})

describe("heavy commands: total and bounded", () => {
  it.prop("US-51 any string: an answer, never a throw", [fc.oneof(fc.string(), fc.fullUnicodeString(), fc.stringMatching(/^[a-z &|;'"\\<>\n()`#=-]{0,80}$/))], ([command]) => {
    const user = compileHeavyRules({ patterns: [{ regex: "x", weight: 2 }], ignore: ["zz"] })
    const a = heavyOf(command, rules)
    const b = heavyOf(command, user)
    expect(a === undefined || a.weight === 1).toBe(true)
    expect(b === undefined || b.weight >= 1).toBe(true)
  })

  it("US-51 a command longer than 100,000 characters is judged on its first 100,000", () => {
    const pad = "x".repeat(HEAVY_SCAN_MAX - 20)
    const late = `echo ${pad}; ${"y".repeat(40)}; make`
    expect(late.length).toBeGreaterThan(HEAVY_SCAN_MAX)
    expect(heavyOf(late, rules)).toBeUndefined()
    expect(heavyOf(late.slice(late.length - 4), rules)).toBeDefined()
    const early = `make; echo ${"x".repeat(HEAVY_SCAN_MAX)}`
    expect(heavyOf(early, rules)).toEqual({ budget: "heavy", weight: 1, matched: "make" })
    // an ignore regex only sees the first 100,000 characters too
    const ignoreLate = compileHeavyRules({ ignore: ["SKIP$"] })
    expect(heavyOf(`${early}SKIP`, ignoreLate)).toBeDefined()
  })

  it("US-51 a command that goes through `ocpool run` is never gated by the plugin, even when it chains another heavy command (two permits would deadlock a budget of 1)", () => {
    const rules = compileHeavyRules({})
    for (const c of ["ocpool run -- npm test", "npx ocpool run -- make", "cd x && ocpool run -- make && npm test", "bash -c 'ocpool run --budget heavy -- cargo build'", "node ./bin/ocpool.js run -- pytest"]) {
      expect(heavyOf(c, rules)).toBeUndefined()
    }
    expect(heavyOf("cd x && make && npm test", rules)).toBeDefined()
  })
})
