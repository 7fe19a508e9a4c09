#!/usr/bin/env bash
# LMCache's optional layer over the pinned environment of python-env.sh: a venv of its own whose
# site-packages hold only python/lmcache.lock (lmcache 0.5.5 and the few packages it needs beyond the
# pinned closure), with a .pth that puts the pinned venv's site-packages behind them. So the pinned
# venv's lock, and its cache key, stay as they are (rebuilding it costs minutes). Cached under
# FLEET_PYENV_CACHE keyed by this lock, this script and the pinned venv it extends; prints the
# path of its env file:
#
#   FLEET_LMCACHE_VENV=...   the layer: bin/lmcache (the server), bin/python (imports lmcache and vLLM)
#
# `lmcache-env.sh --cached` only prints a complete one (exit 1 when there is none): the suites that
# need LMCache find it that way and skip, saying so, without it. .ci/run builds it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
lock=$here/python/lmcache.lock
cache=${FLEET_PYENV_CACHE:-/var/cache/vllm-fleet}
pyenv_file=${FLEET_PYENV_FILE:-}
if [ -z "$pyenv_file" ]; then
  [ "${1:-}" = --cached ] && exit 1
  pyenv_file=$(bash "$here/python-env.sh")
fi
pyenv=$(sed -n 's/^FLEET_PYENV=//p' "$pyenv_file")
[ -x "$pyenv/bin/python" ] || { echo "lmcache-env: no pinned venv at '$pyenv' (from $pyenv_file)" >&2; exit 1; }
key=$( (cat "$lock" "$here/lmcache-env.sh" && echo "$pyenv" && "$pyenv/bin/python" -VV) | sha256sum | cut -c1-16)
dir=$cache/lmcache-$key
if [ -f "$dir/.complete" ]; then
  echo "$dir/env"
  exit 0
fi
[ "${1:-}" = --cached ] && exit 1
mkdir -p "$cache"
exec 9>"$cache/.lmcache-lock"
flock 9
if [ -f "$dir/.complete" ]; then
  echo "$dir/env"
  exit 0
fi
# Layers over older locks or older pinned venvs are dead weight.
find "$cache" -maxdepth 1 -name 'lmcache-*' ! -name "lmcache-$key" -exec rm -rf {} + >&2
started=$(date +%s)
rm -rf "$dir"
# The pinned venv's interpreter, so the layer's bin/python is the same CPython the pinned wheels
# were built for.
base=$("$pyenv/bin/python" -c 'import sys; print(sys._base_executable)')
"$base" -m venv "$dir" >&2
site=$("$dir/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
pinned=$("$pyenv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
# A .pth line that is a folder is appended to sys.path: after the layer's own packages, so the
# lock's opentelemetry 1.40 (what lmcache 0.5.5 accepts) shadows the pinned 1.45.
echo "$pinned" >"$site/pinned.pth"
# --no-deps: lmcache's declared requirements pull cupy-cuda13x and cuda-python (CUDA only, never
# imported on CPU); the lock is the rest of its closure.
"$dir/bin/pip" install --quiet --no-deps --require-hashes -r "$lock" >&2
# Proof it imports over the pinned vLLM: the connector vLLM loads and the server's entry point.
"$dir/bin/python" -c 'import lmcache.cli.main, lmcache.v1.multiprocess.server, vllm.distributed.kv_transfer.kv_connector.v1.lmcache_mp_connector' >&2
{
  echo "FLEET_LMCACHE_VENV=$dir"
  echo "FLEET_LMCACHE_BUILD_S=$(($(date +%s) - started))"
} >"$dir/env"
touch "$dir/.complete"
echo "$dir/env"
