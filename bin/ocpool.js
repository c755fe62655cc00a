#!/usr/bin/env node
import "../dist/ocpool.js"
