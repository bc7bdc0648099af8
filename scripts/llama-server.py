"""llama.cpp's OpenAI-compatible server (`POST /v1/chat/completions`, `GET /v1/models`) on loopback, from the
`xllamacpp` wheel (PyPI, a prebuilt CPU build of llama.cpp) that .ci/run installs under .agent-judge/tools/xllamacpp.
The tests and benches of the OpenAI-compatible judge start it (test/helpers/openai-server.ts); anyone can run it to
try the backend against a local GGUF.

Usage: python3 scripts/llama-server.py --site DIR --model FILE.gguf --port N [--threads 1] [--alias NAME] [--ctx 4096]

It serves until its standard input closes (the parent went away) or it is signalled; it prints one line
`listening <url>` once the model is loaded.
"""

import argparse
import sys

parser = argparse.ArgumentParser()
parser.add_argument("--site", required=True, help="directory xllamacpp is installed in (pip --target)")
parser.add_argument("--model", required=True)
parser.add_argument("--port", type=int, required=True)
parser.add_argument("--host", default="127.0.0.1")
parser.add_argument("--threads", type=int, default=1)
parser.add_argument("--alias", default="gemma3-270m")
parser.add_argument("--ctx", type=int, default=4096)
args = parser.parse_args()

sys.path.insert(0, args.site)
import xllamacpp  # noqa: E402

params = xllamacpp.CommonParams()
params.model.path = args.model
params.hostnames = [args.host]
params.port = args.port
params.n_ctx = args.ctx
params.n_parallel = 1
params.cpuparams.n_threads = args.threads
params.cpuparams_batch.n_threads = args.threads
params.model_alias = {args.alias}
server = xllamacpp.Server(params)
print("listening", server.listening_address, flush=True)
sys.stdin.read()
