#!/usr/bin/env bash
# Build the lab for the browser into web/dist/: index.html, loader.js, the wasm and its
# JavaScript glue. Serve the folder with any static server:
#   python3 -m http.server -d web/dist
# Needs: rustup target add wasm32-unknown-unknown; wasm-bindgen-cli at the version of the
# wasm-bindgen crate in Cargo.lock (this script says which); wasm-opt if installed.
set -euo pipefail
cd "$(dirname "$0")/.."
want="$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/"/, "", $3); print $3; exit }' Cargo.lock)"
have="$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" || true
if [ "$have" != "$want" ]; then
  echo "error: wasm-bindgen-cli $want is needed (found: ${have:-none}):" >&2
  echo "  cargo install wasm-bindgen-cli --version $want" >&2
  exit 1
fi
target="${CARGO_TARGET_DIR:-target}"
cargo build --locked --release -p lab-web --target wasm32-unknown-unknown
out=web/dist
rm -rf "$out"
mkdir -p "$out"
wasm-bindgen --target web --no-typescript --out-dir "$out" \
  "$target/wasm32-unknown-unknown/release/lab_web.wasm"
if command -v wasm-opt >/dev/null 2>&1; then
  wasm-opt -Oz --enable-bulk-memory --enable-nontrapping-float-to-int \
    -o "$out/lab_web_bg.wasm" "$out/lab_web_bg.wasm"
fi
cp web/static/index.html web/static/loader.js "$out/"
echo "built $out ($(du -sh "$out" | cut -f1)); serve it: python3 -m http.server -d $out"
