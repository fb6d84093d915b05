#!/usr/bin/env bash
# The main job. Installs dependencies if missing, builds, then tunes SqueezeNet 1.1 on
# this host with the built-in defaults (every distinct convolution, across its
# algorithms; each measurement appended to build/squeezenet_host.jsonl, resumed if run
# again) and runs the tuned model with the JIT: latency, memory, top-5.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
records=build/squeezenet_host.jsonl
build/tools/tunecli tune squeezenet --target host --records "$records"
build/tools/tunecli run squeezenet --records "$records"
