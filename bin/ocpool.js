#!/usr/bin/env node
// CommonJS (bin/package.json): starting the ES module loader costs more than the fast paths themselves.
require("../dist/ocpool.cjs")
