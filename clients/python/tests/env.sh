#!/usr/bin/env bash
# The client's test environment: a venv of requirements.lock (cached under FLEET_PYENV_CACHE, default
# /var/cache/vllm-fleet, keyed by the lock and the interpreter), with the client installed into it from
# a wheel built here from the working tree (so the test is of the package as users install it).
# Prints the venv's python. `npm test` never needs it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
pkg=$(dirname "$here")
python=${FLEET_PYTHON:-python3.11}
cache=${FLEET_PYENV_CACHE:-/var/cache/vllm-fleet}
key=$( (cat "$here/requirements.lock" && "$python" -VV) | sha256sum | cut -c1-16)
dir=$cache/client-venv-$key
mkdir -p "$cache"
exec 9>"$cache/.client-lock"
flock 9
if [ ! -f "$dir/.installed" ]; then
  find "$cache" -maxdepth 1 -name 'client-venv-*' ! -name "client-venv-$key" -exec rm -rf {} + >&2
  rm -rf "$dir"
  "$python" -m venv "$dir" >&2
  "$dir/bin/pip" install --quiet --no-deps --require-hashes -r "$here/requirements.lock" >&2
  touch "$dir/.installed"
fi
wheels=$(mktemp -d)
trap 'rm -rf "$wheels"' EXIT
# Built from a copy: setuptools writes build/ and *.egg-info beside the sources it builds.
cp -r "$pkg/pyproject.toml" "$pkg/README.md" "$pkg/src" "$wheels/"
"$dir/bin/pip" wheel --quiet --no-deps --no-build-isolation "$wheels" -w "$wheels/dist" >&2
"$dir/bin/pip" install --quiet --no-deps --force-reinstall "$wheels"/dist/vllm_fleet-*.whl >&2
echo "$dir/bin/python"
