#!/usr/bin/env node
import { endInput, processIO } from './cli-io.js';
import { runCli } from './run-cli.js';

process.exitCode = await runCli(process.argv.slice(2), processIO);
endInput();
